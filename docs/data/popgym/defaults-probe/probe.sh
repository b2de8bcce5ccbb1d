#!/bin/bash
# The first probe of docs/POPGYM_DEFAULTS.md, "The learner's defaults on Repeat Previous": lstm on
# RepeatPreviousEasy, seed 0, 200k steps, one process on core 1: train's defaults, then 4x the updates
# per sample (--envs-per-actor 8). Value clipping off (`--value-clip 0`, train's default) is named so
# that the runs stay as they were if the default changes. Needs `pip install -e ".[popgym]"`;
# run folders in runs/popgym-probe/.
set -e
run() {
  name=$1; shift
  taskset -c 1 python -m nalu_rl.train --import popgym --env-id popgym-RepeatPreviousEasy-v0 --agent lstm \
    --seed 0 --total-steps 200000 --eval-episodes 0 --no-progress --actors 0 --learner-threads 1 \
    --logdir "runs/popgym-probe/$name" --value-clip 0 "$@"
}
run lstm-defaults
run lstm-envs8 --envs-per-actor 8
