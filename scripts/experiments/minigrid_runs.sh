#!/usr/bin/env bash
# Makes docs/RESULTS.md, "MiniGrid's memory task, through `--env-id` (3 seeds each, a fixed budget)".
#
# The MiniGrid Memory experiment: each agent of AGENTS (lstm, gru, nac), each seed of SEEDS, on
# ENV_ID (MiniGrid-MemoryS11-v0 through examples/minigrid_memory.py's wrapper) for a fixed budget of
# STEPS steps (--target-fraction 2: no run stops early), --actors 0, CPU, fp32, one thread per trial,
# PARALLEL trials at a time, into RUNS_DIR/<agent>/seed<k>; then the per-seed curves of success rate
# and episode return (scripts/experiments/minigrid_curves.py) into DATA_DIR/<agent>/seed<k>.csv.
#
#   pip install -e ".[minigrid]"
#   bash scripts/experiments/minigrid_runs.sh [RUNS_DIR] [DATA_DIR]
#   (defaults runs/minigrid and docs/data/minigrid; AGENTS, SEEDS, STEPS, PARALLEL, ENV_ID, PYTHON and
#   EXTRA_OPTIONS, more train options, from the environment)
#
# A trial folder that already holds a checkpoint is resumed, so an interrupted experiment continues.
# Where the catalog has no `gru` agent, the gru trials import it from examples/custom_core.py.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS_DIR="${1:-runs/minigrid}"
DATA_DIR="${2:-docs/data/minigrid}"
AGENTS="${AGENTS:-lstm gru nac}"
SEEDS="${SEEDS:-0 1 2}"
STEPS="${STEPS:-2000000}"
PARALLEL="${PARALLEL:-$(nproc)}"
ENV_ID="${ENV_ID:-minigrid_memory/MemoryS11-v0}"
PYTHON="${PYTHON:-python}"
EXTRA_OPTIONS="${EXTRA_OPTIONS:-}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/examples${PYTHONPATH:+:$PYTHONPATH}"

gru_import=""
if ! "$PYTHON" -m nalu_rl.train --list-agents | awk '{print $1}' | grep -qx gru; then
  gru_import="--import custom_core"
fi

train_one() {  # agent seed
  local folder="$RUNS_DIR/$1/seed$2"
  local imports="--import minigrid_memory"
  [[ "$1" == gru ]] && imports="$imports $gru_import"
  local options=(--env-id "$ENV_ID" --agent "$1" --seed "$2" $imports
                 --total-steps "$STEPS" --target-fraction 2 --actors 0 --device cpu --precision fp32
                 --learner-threads 1 --success-window 500 --eval-episodes 0 --no-progress $EXTRA_OPTIONS)
  mkdir -p "$folder"
  if [[ -f "$folder/checkpoint.pt" ]]; then
    # A run imports its recorded modules only when they are named again (--import).
    "$PYTHON" -m nalu_rl.train --resume "$folder" --total-steps "$STEPS" $imports >>"$folder/train.log" 2>&1
  else
    "$PYTHON" -m nalu_rl.train "${options[@]}" --logdir "$folder" >>"$folder/train.log" 2>&1
  fi
}

trials=()
for agent in $AGENTS; do for seed in $SEEDS; do trials+=("$agent $seed"); done; done
mkdir -p "$RUNS_DIR"
started=$SECONDS
for trial in "${trials[@]}"; do
  while (( $(jobs -rp | wc -l) >= PARALLEL )); do sleep 1; done
  train_one $trial &
done
wait || true
echo "trainings ended after $((SECONDS - started)) s"
failed=0
for trial in "${trials[@]}"; do
  set -- $trial
  echo "$1 seed $2: $(tail -n 1 "$RUNS_DIR/$1/seed$2/train.log")"
  [[ -f "$RUNS_DIR/$1/seed$2/checkpoint.pt" ]] || failed=1
done
"$PYTHON" scripts/experiments/minigrid_curves.py "$RUNS_DIR" "$DATA_DIR"
exit "$failed"
