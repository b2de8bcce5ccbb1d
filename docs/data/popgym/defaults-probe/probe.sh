#!/bin/bash
# lstm on RepeatPreviousEasy, 200k steps, one process on core 1: train's defaults, then 4x more updates per sample
cd /tmp
run() { name=$1; shift; taskset -c 1 /work/main/.venv/bin/python -W ignore -m nalu_rl.train --import popgym \
  --env-id popgym-RepeatPreviousEasy-v0 --agent lstm --seed 0 --total-steps 200000 --eval-episodes 0 --no-progress \
  --actors 0 --learner-threads 1 --logdir /work/runs/item4/$name "$@" > /work/runs/item4/$name.out 2>&1; }
run lstm-defaults
run lstm-envs8 --envs-per-actor 8
