#!/bin/bash
# Makes docs/TRAINING.md, "Determinism".
#
# The figures of docs/TRAINING.md "Determinism": five 20k-step runs of nac (symbolic, seed 1), then
# the largest weight difference between two runs with 2 learner threads, between 1 and 2 learner
# threads, and between two runs with 2 actor processes.
#   bash scripts/experiments/determinism_gaps.sh [FOLDER]   (FOLDER receives runs/determinism-*; PYTHON from the env)
set -u
cd "${1:-.}"
PY="${PYTHON:-python}"
base=(--agent nac --obs symbolic --total-steps 20000 --seed 1 --eval-episodes 0 --no-progress)
{
echo "== $(date -u +%FT%TZ) torch $($PY -c 'import torch; print(torch.__version__)'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for spec in "threads1:--actors 0 --learner-threads 1" "threads2:--actors 0 --learner-threads 2" "threads2b:--actors 0 --learner-threads 2" "actors2a:--actors 2 --learner-threads 1" "actors2b:--actors 2 --learner-threads 1"; do
  name=${spec%%:*}; opts=${spec#*:}
  echo "\$ python -m nalu_rl.train ${base[*]} $opts --logdir runs/determinism-$name"
  nice -n 10 $PY -m nalu_rl.train "${base[@]}" $opts --logdir runs/determinism-$name 2>&1 | tail -n 2
done
$PY - <<'PY'
import torch
from nalu_rl.checkpoint import load_checkpoint as load
def gap(a, b):
    a, b = load(f"runs/determinism-{a}")["model"], load(f"runs/determinism-{b}")["model"]
    return max((a[k] - b[k]).abs().max().item() for k in a)
for a, b in (("threads2", "threads2b"), ("threads1", "threads2"), ("actors2a", "actors2b")):
    print(f"largest weight difference, {a} vs {b}: {gap(a, b):.2e}")
PY
}
