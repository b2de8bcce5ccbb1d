#!/usr/bin/env bash
# Makes docs/journal/2026-12-07-count-student-tasks.md, "2026-12-07: the count student on three tasks".
#
# Runs of a count-student agent (count_student_variants.py) one after another on one core, each one
# process pinned to CORE (symbolic observations where a task has modes), then each evaluated: the
# kept model (best.pt where the run wrote one, else checkpoint.pt) at T = 5..12, 13, 20, 50, 100, 200,
# 500, 1000, 100 episodes each, actions sampled, evaluation seed = training seed + 100,000 (the
# benchmark's rule), and probed (the count's weights, the phase by cue segment). A finished run is not
# trained again; an unfinished one resumes. A run stopped before its budget (Ctrl-C) is not evaluated.
#
#   bash scripts/experiments/count_student_queue.sh CORE AGENT "TASK:SEED ..." [RUNS_DIR] [DATA_DIR]
#   e.g. bash scripts/experiments/count_student_queue.sh 0 count-student-return "ReadySetGo:0 TimeTrack:0"
#
# Run folders RUNS_DIR/<agent>-<task>-seed<k> (default runs/count-student); the evaluation's CSV and the
# probe go to DATA_DIR/<agent>/<task>-seed<k>.csv and -probe.md (default docs/data/count-student).
# TRAIN_ARGS (in the environment) are added to each new run's train command, e.g.
# TRAIN_ARGS="--log-interval-s 0.5" for a finer TensorBoard log.
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "$#" -lt 3 ]; then
  sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = "--help" ] && exit 0 || exit 2
fi
cd "$(dirname "$0")"
core=$1
agent=$2
runs=$(realpath -m "${4:-../../runs/count-student}")
data=$(realpath -m "${5:-../../docs/data/count-student}")/$agent
mkdir -p "$runs" "$data"
export PYTHONUNBUFFERED=1
for job in $3; do
  IFS=: read -r task seed <<< "$job"
  dir=$runs/$agent-$task-seed$seed
  if [ -f "$dir/checkpoint.pt" ]; then
    if ! grep -q '"finished"' "$dir/run_status.json"; then
      taskset -c "$core" python -m nalu_rl.train --import count_student_variants --resume "$dir" \
        --no-progress >> "$dir.log" 2>&1
    fi
  else
    obs=()  # symbolic observations where a task has modes, as the benchmark's protocol
    case $task in TimeTrack | IntervalTiming) obs=(--obs symbolic) ;; esac
    taskset -c "$core" python -m nalu_rl.train --import count_student_variants --agent "$agent" \
      --env-id "nalu_rl/$task-v0" "${obs[@]}" --seed "$seed" --eval-episodes 0 --no-progress \
      --logdir "$dir" ${TRAIN_ARGS:-} > "$dir.log" 2>&1
  fi
  if ! grep -q '"finished"' "$dir/run_status.json"; then
    echo "$agent $task seed $seed: stopped before its budget (not evaluated); run the queue again to resume" >&2
    exit 130
  fi
  kept=$dir/best.pt
  [ -f "$kept" ] || kept=$dir/checkpoint.pt
  taskset -c "$core" python -m nalu_rl.evaluate --checkpoint "$kept" --import count_student_variants \
    --delays 5-12,13,20,50,100,200,500,1000 --episodes 100 --seed $((seed + 100000)) \
    --out "$dir/eval" > "$dir/eval.log" 2>&1
  cp "$dir/eval/"*.csv "$data/$task-seed$seed.csv"
  taskset -c "$core" python -c "import sys, runpy, count_student_variants; \
    sys.argv = ['probe_event_counter.py', '$kept', '--episodes', '50', '--delays', '5', '8', '12']; \
    runpy.run_path('probe_event_counter.py', run_name='__main__')" > "$data/$task-seed$seed-probe.md" 2>&1 || true
  echo "$agent $task seed $seed: $(basename "$kept") evaluated"
done
