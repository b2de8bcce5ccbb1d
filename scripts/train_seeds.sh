#!/usr/bin/env bash
# Train AGENT for each SEED into runs/<obs>/<agent>/seed<k>, resuming runs that were interrupted and
# skipping runs that finished (their success_by_delay.csv exists). Extra train options follow "--".
#   scripts/train_seeds.sh OBS "AGENT ..." "SEED ..." [-- TRAIN OPTIONS]
set -uo pipefail
obs=$1 agents=$2 seeds=$3
shift 3
[ "${1:-}" = "--" ] && shift
for agent in $agents; do
  for seed in $seeds; do
    dir="runs/$obs/$agent/seed$seed"
    if [ -f "$dir/success_by_delay.csv" ]; then
      echo "done already: $dir"
    elif [ -f "$dir/checkpoint.pt" ]; then
      echo "resuming: $dir"
      python -m nalu_rl.train --resume "$dir" --no-progress || echo "failed ($?): $dir"
    else
      echo "training: $dir"
      python -m nalu_rl.train --agent "$agent" --obs "$obs" --seed "$seed" --logdir "$dir" --no-progress "$@" \
        || echo "failed ($?): $dir"
    fi
  done
done
