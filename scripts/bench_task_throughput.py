"""Training throughput of one agent on each timing task, against TimeTrack symbolic in the same run.

Each round trains the agent for --steps environment steps on every task in turn (`python -m
nalu_rl.train` on its defaults for that agent, no final evaluation), and reads the steps and seconds
that train prints at its end; the SPS of a task is compared with TimeTrack symbolic's of the same
round, so slow drifts of a shared machine touch both sides of a ratio alike.

    python scripts/bench_task_throughput.py --agent lstm --steps 600000 --rounds 2
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BASELINE = "nalu_rl/TimeTrack-v0"
TASKS = (
    BASELINE,
    "nalu_rl/IntervalTiming-v0",
    "nalu_rl/ReadySetGo-v0",
    "nalu_rl/ScaledReproduction-v0",
    "nalu_rl/IntervalDiscrimination-v0",
    "nalu_rl/DistractorReproduction-v0",
    "nalu_rl/ContinuationTapping-v0",
)
GRIDWORLDS = (BASELINE, "nalu_rl/IntervalTiming-v0")
FINAL_LINE = re.compile(r"([\d,]+) steps in ([\d.]+) s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Training SPS of one agent on each timing task (train's defaults for the agent, "
        "symbolic gridworlds), each round in turns, with its ratio to TimeTrack symbolic's.",
    )
    parser.add_argument("--agent", default="lstm", help="the agent to train (default lstm)")
    parser.add_argument("--steps", type=int, default=600_000, help="steps per run (default 600,000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of turns over the tasks (default 2)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help="env ids (default: the benchmark's)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    if BASELINE not in args.tasks:
        args.tasks.insert(0, BASELINE)
    return args


def steps_per_second(agent: str, env_id: str, steps: int, logdir: Path) -> float:
    """Train `agent` on `env_id` for `steps` steps; the SPS its final line reports."""
    observation = ["--obs", "symbolic"] if env_id in GRIDWORLDS else []
    command = [
        sys.executable, "-m", "nalu_rl.train", "--agent", agent, "--env-id", env_id, *observation,
        "--total-steps", str(steps), "--eval-episodes", "0", "--no-progress", "--logdir", str(logdir),
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True)
    match = FINAL_LINE.search(finished.stderr + finished.stdout)
    if finished.returncode != 0 or match is None:
        tail = (finished.stderr or finished.stdout).strip().splitlines()[-1:]
        raise SystemExit(f"train on {env_id} failed (exit {finished.returncode}): {' '.join(tail)}")
    return int(match.group(1).replace(",", "")) / float(match.group(2))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sps: dict[str, list[float]] = {task: [] for task in args.tasks}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(args.rounds):
            for task in args.tasks:
                logdir = Path(folder) / f"{round_index}-{task.replace('/', '-')}"
                sps[task].append(steps_per_second(args.agent, task, args.steps, logdir))
                print(f"round {round_index}: {task}: {sps[task][-1]:,.0f} SPS", flush=True)
    print(f"\n{args.agent}, {args.steps:,} steps a run, {args.rounds} rounds; ratio to {BASELINE} per round")
    print(f"{'task':<36} {'median SPS':>11}  ratio per round")
    for task in args.tasks:
        ratios = [value / base for value, base in zip(sps[task], sps[BASELINE], strict=True)]
        print(
            f"{task:<36} {statistics.median(sps[task]):>11,.0f}  "
            + " ".join(f"{ratio:.2f}" for ratio in ratios)
        )


if __name__ == "__main__":
    main()
