#!/bin/bash
# The probes of docs/POPGYM_DEFAULTS.md, "The value loss through the shared LSTM": lstm, seed 0 (the one-step
# memory task also seed 1), each run one process on one core (`--actors 0 --learner-threads 1`), two
# at a time, on train's defaults (value_coef 0.5, value clipping off: `--value-clip 0` is named below,
# and a run's own option overrides it) but for the options named.
# rp-vc05 is the defaults run of ../defaults-probe/probe.sh (200k steps).
# Runs marked "stopped" were ended by hand at the step their CSV ends. Needs
# `pip install -e ".[popgym]"`; run folders in runs/value-loss-probe/; the CSVs come from
# scripts/scalars_csv.py and the table from scripts/experiments/probe_curves_table.py.
set -e
popgym() {  # NAME CORE STEPS TASK [options]
  name=$1 core=$2 steps=$3 task=$4; shift 4
  taskset -c "$core" python -m nalu_rl.train --import popgym --env-id "popgym-$task-v0" --agent lstm \
    --seed 0 --total-steps "$steps" --eval-episodes 0 --no-progress --actors 0 --learner-threads 1 \
    --logdir "runs/value-loss-probe/$name" --value-clip 0 "$@"
}
panel() {  # NAME SEED CORE ENV_ID [options]: 100k steps, the recent return over 100 episodes
  name=$1 seed=$2 core=$3 env_id=$4; shift 4
  PYTHONPATH=tests taskset -c "$core" python -m nalu_rl.train --import memory_task --env-id "$env_id" \
    --agent lstm --seed "$seed" --total-steps 100000 --eval-episodes 0 --no-progress --actors 0 \
    --learner-threads 1 --success-window 100 --logdir "runs/value-loss-probe/$name" --value-clip 0 "$@"
}
# Repeat Previous Easy (rp-vc05 is seed 0 of the defaults; seeds 1 and 2 ran last)
for seed in 1 2; do
  taskset -c "$((seed - 1))" python -m nalu_rl.train --import popgym --env-id popgym-RepeatPreviousEasy-v0 \
    --agent lstm --seed "$seed" --total-steps 200000 --eval-episodes 0 --no-progress --actors 0 \
    --learner-threads 1 --logdir "runs/value-loss-probe/rp-vc05-s$seed" --value-clip 0
done
popgym rp-e8-mb1 0 300000 RepeatPreviousEasy --envs-per-actor 8 --ppo-minibatches 1  # stopped
popgym rp-e4-mb1 1 300000 RepeatPreviousEasy --envs-per-actor 4 --ppo-minibatches 1  # stopped
popgym rp-vc01 0 300000 RepeatPreviousEasy --value-coef 0.1
popgym rp-norn 1 300000 RepeatPreviousEasy --no-return-norm
popgym rp-vc01-ent0 0 300000 RepeatPreviousEasy --value-coef 0.1 --entropy-coef 0  # stopped
popgym rp-vc01-lr3 1 300000 RepeatPreviousEasy --value-coef 0.1 --learning-rate 3e-4  # stopped
popgym rp-vc002 0 300000 RepeatPreviousEasy --value-coef 0.02  # stopped
popgym rp-vc01-e8ep4mb2 1 300000 RepeatPreviousEasy --value-coef 0.1 --envs-per-actor 8 --ppo-epochs 4 \
  --ppo-minibatches 2  # stopped
popgym rp-vc025 1 250000 RepeatPreviousEasy --value-coef 0.25
popgym rp-vclip02 1 250000 RepeatPreviousEasy --value-clip 0.2
popgym rp-vclip1 1 250000 RepeatPreviousEasy --value-clip 1.0
# Repeat First Easy
popgym rf-vc01 0 300000 RepeatFirstEasy --value-coef 0.1
popgym rf-vc05 0 300000 RepeatFirstEasy
popgym rf-vclip02 1 300000 RepeatFirstEasy --value-clip 0.2
# The one-step memory task (tests/memory_task.py), CartPole, FrozenLake
for seed in 0 1; do
  suffix=$([ "$seed" = 1 ] && echo -s1 || true)
  panel "mem-vc05$suffix" "$seed" 1 nalu_rl_tests/OneStepMemory-v0
  panel "mem-vc01$suffix" "$seed" 1 nalu_rl_tests/OneStepMemory-v0 --value-coef 0.1
  panel "mem-vc025$suffix" "$seed" 0 nalu_rl_tests/OneStepMemory-v0 --value-coef 0.25
  panel "mem-vclip02$suffix" "$seed" 0 nalu_rl_tests/OneStepMemory-v0 --value-clip 0.2
done
panel cp-vc05 0 0 CartPole-v1
panel cp-vc01 0 0 CartPole-v1 --value-coef 0.1
panel cp-vclip02 0 0 CartPole-v1 --value-clip 0.2
panel fl-vc05 0 0 FrozenLake-v1
panel fl-vclip02 0 0 FrozenLake-v1 --value-clip 0.2
panel cp-vclip1 0 0 CartPole-v1 --value-clip 1.0
panel mem-vclip1 0 0 nalu_rl_tests/OneStepMemory-v0 --value-clip 1.0
