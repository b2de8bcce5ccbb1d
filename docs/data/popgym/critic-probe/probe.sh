#!/bin/bash
# The probes of docs/POPGYM_DEFAULTS.md, "The value loss through the shared LSTM", its detached critic: the
# agents of scripts/experiments/critic_variants.py, each run one process on one core
# (`--actors 0 --learner-threads 1`), two at a time, on train's defaults. Needs
# `pip install -e ".[popgym]"`; run folders in runs/critic-probe/; the CSVs come from
# scripts/scalars_csv.py and the table from scripts/experiments/probe_curves_table.py.
set -e
export PYTHONPATH=scripts/experiments:tests
run() {  # NAME AGENT SEED CORE STEPS ENV_ID MODULE
  taskset -c "$4" python -m nalu_rl.train --import "$7" --import critic_variants --env-id "$6" \
    --agent "$2" --seed "$3" --total-steps "$5" --eval-episodes 0 --no-progress --actors 0 \
    --learner-threads 1 --success-window 100 --logdir "runs/critic-probe/$1"
}
(
  for seed in 0 1 2; do
    run "rp-detached-s$seed" lstm-critic-detached "$seed" 0 200000 popgym-RepeatPreviousEasy-v0 popgym
  done
  run mem-detached-s1 lstm-critic-detached 1 0 100000 nalu_rl_tests/OneStepMemory-v0 memory_task
) &
(
  run rp-detached-mlp-s0 lstm-critic-detached-mlp 0 1 200000 popgym-RepeatPreviousEasy-v0 popgym
  run mem-detached-s0 lstm-critic-detached 0 1 100000 nalu_rl_tests/OneStepMemory-v0 memory_task
  run cp-detached-s0 lstm-critic-detached 0 1 100000 CartPole-v1 memory_task
) &
wait
