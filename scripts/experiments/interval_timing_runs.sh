#!/usr/bin/env bash
# Makes docs/RESULTS.md, "IntervalTiming: a count that goes up, then down (symbolic, 5 seeds each)".
#
# The IntervalTiming experiment (docs/RESULTS.md "IntervalTiming"), or the same protocol on another
# timing task (ENV_ID, e.g. nalu_rl/TimeTrack-v0 for learned-count's runs): each agent of AGENTS, each seed
# of SEEDS, symbolic observations, the protocol of the symbolic TimeTrack runs (a fixed budget of
# STEPS steps, --target-fraction 2 so that no run stops early, --actors 0, CPU, fp32), every trial a
# process of its own with one thread; then every seed evaluated at 200 episodes per T to T = 1000,
# its CSV copied to DATA_DIR/<agent>/seed<k>.csv. The checkpoint evaluated is each run's CHECKPOINT
# (default checkpoint.pt, the latest; best.pt, the one at the run's best recent training success).
#
#   bash scripts/experiments/interval_timing_runs.sh [RUNS_DIR] [DATA_DIR]
#   (defaults runs/interval-timing and docs/data/interval-timing; ENV_ID, AGENTS, SEEDS, STEPS, PARALLEL,
#   DEADLINE_S, PYTHON, CHECKPOINT and EXTRA_OPTIONS, more train options such as "--import updown_count", from
#   the environment)
#
# A trial folder that already holds a checkpoint is resumed, so an interrupted experiment continues.
# Trainings still running DEADLINE_S seconds after the start get SIGINT: each saves its checkpoint
# and stops, is evaluated as it stands, and its train.log's last line says how many steps it made.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS_DIR="${1:-runs/interval-timing}"
DATA_DIR="${2:-docs/data/interval-timing}"
ENV_ID="${ENV_ID:-nalu_rl/IntervalTiming-v0}"
AGENTS="${AGENTS:-lstm nac signed-count}"
SEEDS="${SEEDS:-0 1 2 3 4}"
STEPS="${STEPS:-6000000}"
PARALLEL="${PARALLEL:-$(nproc)}"
DEADLINE_S="${DEADLINE_S:-100000}"
PYTHON="${PYTHON:-python}"
EXTRA_OPTIONS="${EXTRA_OPTIONS:-}"
CHECKPOINT="${CHECKPOINT:-checkpoint.pt}"
DELAYS="1-40,50,60,70,80,90,100,200,500,1000"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1

train_one() {  # agent seed
  local folder="$RUNS_DIR/$1-seed$2"
  local options=(--env-id "$ENV_ID" --obs symbolic --agent "$1" --seed "$2"
                 --total-steps "$STEPS" --target-fraction 2 --actors 0 --device cpu --precision fp32
                 --learner-threads 1 --eval-episodes 0 --no-progress $EXTRA_OPTIONS)
  mkdir -p "$folder"
  if [[ -f "$folder/checkpoint.pt" ]]; then
    # A run imports its recorded modules only when they are named again (EXTRA_OPTIONS' --import).
    "$PYTHON" -m nalu_rl.train --resume "$folder" --total-steps "$STEPS" $EXTRA_OPTIONS >>"$folder/train.log" 2>&1
  else
    "$PYTHON" -m nalu_rl.train "${options[@]}" --logdir "$folder" >>"$folder/train.log" 2>&1
  fi
}

evaluate_one() {  # agent seed
  local folder="$RUNS_DIR/$1-seed$2"
  # These runs are this script's own, so their recorded --import modules are trusted.
  "$PYTHON" -m nalu_rl.evaluate --checkpoint "$folder/$CHECKPOINT" --trust-imports --delays "$DELAYS" --episodes 200 \
    --out "$folder/long" >"$folder/evaluate.log" 2>&1
  mkdir -p "$DATA_DIR/$1"
  cp "$folder/long/success_by_delay.csv" "$DATA_DIR/$1/seed$2.csv"
}

trials=()
for agent in $AGENTS; do for seed in $SEEDS; do trials+=("$agent $seed"); done; done
mkdir -p "$RUNS_DIR"
started=$SECONDS
running=()
for trial in "${trials[@]}"; do
  while (( $(jobs -rp | wc -l) >= PARALLEL )); do sleep 1; done
  train_one $trial &
  running+=($!)
done
while (( $(jobs -rp | wc -l) > 0 )); do
  if (( SECONDS - started > DEADLINE_S )); then
    echo "deadline of ${DEADLINE_S} s: SIGINT to the trainings still running"
    # Only this script's trainings: the train process of each trial's subshell.
    for pid in "${running[@]}"; do pkill -INT -P "$pid" || true; done
    break
  fi
  sleep 2
done
wait || true
echo "trainings ended after $((SECONDS - started)) s"
for trial in "${trials[@]}"; do
  set -- $trial
  echo "$1 seed $2: $(tail -n 1 "$RUNS_DIR/$1-seed$2/train.log")"
done
for trial in "${trials[@]}"; do
  while (( $(jobs -rp | wc -l) >= PARALLEL )); do sleep 1; done
  evaluate_one $trial &
done
wait
echo "evaluations ended after $((SECONDS - started)) s; CSVs in $DATA_DIR"
