#!/usr/bin/env bash
# The GPU check, prepared once: on a CUDA machine, install what is missing, run the tests that need
# CUDA, measure the device runtime (`--runtime device`, `nac`, symbolic and pixels, the envs grown
# until the learner is fed: SPS end to end and learner-only samples/s per batch), then the learner
# runtime (16 actors, pixels) in fp32 and bf16, each printing one table.
# Every step runs under `timeout`; the whole check ends within 8 minutes.
#
#   bash scripts/device_check.sh            # run it (from the repository root or anywhere)
#   bash scripts/device_check.sh --dry-run  # print the plan, one command a line, and run nothing
set -euo pipefail

DRY_RUN=0
case "${1:-}" in
  "") ;;
  --dry-run) DRY_RUN=1 ;;
  *) echo "error: unknown option ${1}; use --dry-run or nothing" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
# This checkout's code laid out as it installs (envs/ and agents/ inside nalu_rl/), without pip: a
# device machine may have no package index. The tests run from there, so that the checkout's own
# nalu_rl/ folder (which lacks envs and agents) is not the one imported.
LAYOUT="${TMPDIR:-/tmp}/nalu_rl_layout_$$"

# Seconds per step at most: 120 + 90 + 180 + 90 = 480 s, the 8-minute limit (installing takes
# seconds when the wheels are carried). Each benchmark prints its rows as it goes, so a step cut by
# its timeout still shows what it measured.
INSTALL_S=120
TESTS_S=90
DEVICE_BENCH_S="${DEVICE_BENCH_S:-180}"
DEVICE_BATCHES="${DEVICE_BATCHES:-1024 4096 16384 65536}"   # envs; a mode stops once SPS gains < 10%
BENCH_S="${BENCH_S:-90}"
LEARNER_STEPS="${LEARNER_STEPS:-600000}"

CHECK_DEPENDENCIES="import torch, gymnasium, tensorboard, tqdm, pytest"
CHECK_CUDA="import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
# Wheels carried in .whl/ (gymnasium and farama-notifications, which the device image lacks) when
# there are any, else the package index.
if compgen -G ".whl/*.whl" >/dev/null; then
  INSTALL=(timeout "$INSTALL_S" "$PYTHON" -m pip install -q --no-index --no-deps --target /tmp/nalu_rl_site .whl/*.whl)
  export PYTHONPATH="/tmp/nalu_rl_site${PYTHONPATH:+:$PYTHONPATH}"
else
  INSTALL=(timeout "$INSTALL_S" "$PYTHON" -m pip install -q "gymnasium>=1.1" tensorboard tqdm pytest)
fi
export PYTHONPATH="$LAYOUT${PYTHONPATH:+:$PYTHONPATH}"
TESTS=(timeout "$TESTS_S" "$PYTHON" -m pytest -p no:cacheprovider -m cuda tests/test_precision.py
       tests/test_device_env.py tests/test_device_runtime.py -rs)
# The device runtime: envs per batch grown until the learner is fed (fp32, which the learner-only
# figures of 2026-12-04 found faster than bf16 on the H200).
# shellcheck disable=SC2206  # DEVICE_BATCHES is a list of numbers, split on purpose
DEVICE_BENCH=(timeout "$DEVICE_BENCH_S" "$PYTHON" scripts/bench_train.py --device cuda --agent nac
       --modes symbolic pixels --precision fp32 --device-batches $DEVICE_BATCHES --learner-steps 400000
       --updates 10)
# One table: learner-only samples/s and learner-runtime SPS, fp32 and bf16 taking turns.
BENCH=(timeout "$BENCH_S" "$PYTHON" scripts/bench_train.py --device cuda --actors 16 --modes pixels
       --compare worktree --precisions fp32 bf16 --rounds 1 --learner-steps "$LEARNER_STEPS" --updates 20)

if [[ "$DRY_RUN" == 1 ]]; then
  echo "# plan of scripts/device_check.sh (nothing is run)"
  echo "cp -r nalu_rl tests pyproject.toml $LAYOUT/ (with envs/ and agents/ inside nalu_rl/)"
  echo "$PYTHON -c '$CHECK_DEPENDENCIES' || ${INSTALL[*]}"
  echo "$PYTHON -c '$CHECK_CUDA'  # else stop: no CUDA device"
  echo "(cd $LAYOUT && ${TESTS[*]})"
  echo "${DEVICE_BENCH[*]}"
  echo "${BENCH[*]}"
  exit 0
fi

started=$SECONDS
mkdir -p "$LAYOUT" && cp -r nalu_rl tests pyproject.toml "$LAYOUT/"
cp -r envs "$LAYOUT/nalu_rl/envs" && cp -r agents "$LAYOUT/nalu_rl/agents"
if ! "$PYTHON" -c "$CHECK_DEPENDENCIES" 2>/dev/null; then
  echo "== installing: ${INSTALL[*]}"
  "${INSTALL[@]}"
fi
if ! "$PYTHON" -c "$CHECK_CUDA"; then
  echo "error: torch sees no CUDA device ($("$PYTHON" -c 'import torch; print(torch.__version__)'))" >&2
  exit 1
fi
"$PYTHON" -c "import torch; print('==', torch.__version__, torch.cuda.get_device_name(), 'bf16:', torch.cuda.is_bf16_supported())"
echo "== CUDA tests: ${TESTS[*]}"
tests_status=0
(cd "$LAYOUT" && "${TESTS[@]}") || tests_status=$?  # the benchmark still runs; the exit code tells
echo "== device runtime: ${DEVICE_BENCH[*]}"
"${DEVICE_BENCH[@]}" || echo "== device runtime benchmark ended with exit code $? (124: its timeout)"
echo "== learner runtime: ${BENCH[*]}"
"${BENCH[@]}" || echo "== learner runtime benchmark ended with exit code $? (124: its timeout)"
echo "== device check done in $((SECONDS - started)) s (CUDA tests exit code $tests_status)"
exit "$tests_status"
