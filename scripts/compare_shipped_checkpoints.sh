#!/usr/bin/env bash
# Evaluate every shipped checkpoint with two installs of the project (e.g. an older commit's and
# this tree's), on the same seed and delays, and say which CSVs agree byte for byte.
#
#   bash scripts/compare_shipped_checkpoints.sh OLD_PYTHON NEW_PYTHON [OUT_DIR]
#   (each PYTHON the interpreter of a venv where that tree is installed, e.g. with pip install -e)
set -u
usage="usage: bash scripts/compare_shipped_checkpoints.sh OLD_PYTHON NEW_PYTHON [OUT_DIR]"
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  echo "$usage"; echo
  echo "Evaluate every shipped checkpoint with two installs of the project, on the same seed and delays,"
  echo "and say which CSVs agree byte for byte."
  exit 0
fi
if (( $# < 2 || $# > 3 )); then
  echo "$usage" >&2; echo "error: give the two interpreters, OLD_PYTHON and NEW_PYTHON" >&2
  exit 2
fi
old_python="$1"; new_python="$2"; out="${3:-/tmp/compare_shipped}"
rm -rf "$out"; mkdir -p "$out"
names=$("$new_python" -c "from nalu_rl.checkpoint import shipped_checkpoint_names as n; print(*n())")
for side in old new; do
  python="$old_python"; [[ $side == new ]] && python="$new_python"
  for name in $names; do
    (cd "$out" && OMP_NUM_THREADS=1 "$python" -m nalu_rl.evaluate --agent "$name" --delays 5,12,40 \
      --episodes 30 --seed 0 --out "$out/$side/$name" >"$out/$side-$name.log" 2>&1)
  done
done
same=0; total=0
for name in $names; do
  total=$((total + 1))
  if cmp -s "$out/old/$name/success_by_delay.csv" "$out/new/$name/success_by_delay.csv"; then
    same=$((same + 1)); echo "same    $name"
  else
    echo "differ  $name"
  fi
done
echo "$same of $total shipped checkpoints evaluate to the same CSV byte for byte"
