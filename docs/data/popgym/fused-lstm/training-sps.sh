#!/bin/bash
# Training SPS of `lstm` on POPGym's Count Recall and Repeat Previous Easy (train's defaults: a critic
# of its own), the code before the fused LSTM (58c1c36~1) and with it (58c1c36, since withdrawn), in
# turns, 2 rounds of 100,000 steps a run. Run from the repository root on a quiet machine; output as
# docs/data/popgym/fused-lstm/training-sps-2026-12-06.log.
set -e
trees=$(mktemp -d)
python - "$trees" <<'PY'
import sys
sys.path.insert(0, "scripts")
import bench_train
for revision in ("58c1c36~1", "58c1c36"):
    bench_train.source_tree(revision, sys.argv[1])
PY
for round in 1 2; do
  for tree in 58c1c36~1 58c1c36; do
    echo "== round $round tree $tree"
    (cd "$trees/$tree" && PYTHONPATH="$trees/$tree" python "$OLDPWD/scripts/bench_task_throughput.py" --import popgym \
      --tasks popgym-CountRecallEasy-v0 popgym-RepeatPreviousEasy-v0 --steps 100000 --rounds 1 2>&1 | tail -8)
  done
done
