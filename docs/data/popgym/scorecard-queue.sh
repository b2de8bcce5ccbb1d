#!/bin/bash
# The scorecard's runs (docs/POPGYM.md, "Scorecard") one after another on one core, each one process
# (`--actors 0 --learner-threads 1`); a finished run is skipped, an unfinished one resumed from its
# checkpoint. Run from the repository root, e.g. two queues, one per core:
#   bash docs/data/popgym/scorecard-queue.sh 0 "lstm:RepeatFirstEasy:0:1000000 gru:RepeatFirstEasy:0:1000000"
# Run folders: runs/popgym/<agent>-<task>-seed<k>; then
#   python scripts/popgym_scorecard.py docs/data/popgym --collect runs/popgym
core=$1
for job in $2; do
  IFS=: read -r agent task seed steps <<< "$job"
  dir=runs/popgym/$agent-$task-seed$seed
  if [ -f "$dir/run_status.json" ] && grep -q '"finished"' "$dir/run_status.json"; then
    continue
  fi
  mkdir -p runs/popgym
  if [ -f "$dir/checkpoint.pt" ]; then
    taskset -c "$core" python -m nalu_rl.train --resume "$dir" --import popgym --no-progress >> "$dir.log" 2>&1
  else
    taskset -c "$core" python -m nalu_rl.train --import popgym --env-id "popgym-$task-v0" --agent "$agent" \
      --seed "$seed" --total-steps "$steps" --eval-episodes 0 --no-progress --actors 0 --learner-threads 1 \
      --logdir "$dir" > "$dir.log" 2>&1
  fi
done
