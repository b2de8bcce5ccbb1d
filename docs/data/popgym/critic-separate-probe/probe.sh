#!/bin/bash
# The probes of docs/POPGYM_DEFAULTS.md of a critic variant of scripts/experiments/critic_variants.py:
#   bash docs/data/popgym/critic-separate-probe/probe.sh                          # "A critic of its own"
#   bash docs/data/popgym/critic-separate-probe/probe.sh lstm-critic-encoder encoder
#                          # "A critic with an encoder of its own, reading the actor's memory"
# Each run one process on one core (`--actors 0 --learner-threads 1`), one after another on core 0,
# on train's defaults. Needs `pip install -e ".[popgym]"`; run folders in runs/critic-TAG-probe/; the
# CSVs come from scripts/scalars_csv.py and the table from scripts/experiments/probe_curves_table.py.
set -e
agent=${1:-lstm-critic-separate}
tag=${2:-separate}
export PYTHONPATH=scripts/experiments:tests
run() {  # NAME SEED STEPS ENV_ID MODULE
  taskset -c 0 python -m nalu_rl.train --import "$5" --import critic_variants --env-id "$4" \
    --agent "$agent" --seed "$2" --total-steps "$3" --eval-episodes 0 --no-progress \
    --actors 0 --learner-threads 1 --success-window 100 --logdir "runs/critic-$tag-probe/$1"
}
for seed in 0 1 2; do
  run "rp-$tag-s$seed" "$seed" 200000 popgym-RepeatPreviousEasy-v0 popgym
done
run "mem-$tag-s0" 0 100000 nalu_rl_tests/OneStepMemory-v0 memory_task
run "cp-$tag-s0" 0 100000 CartPole-v1 memory_task
run "mem-$tag-s1" 1 100000 nalu_rl_tests/OneStepMemory-v0 memory_task
