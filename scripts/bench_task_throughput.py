"""Training throughput of one agent on each timing task, against TimeTrack symbolic in the same run.

Each round trains the agent for --steps environment steps on every task in turn (`python -m
nalu_rl.train` on its defaults for that agent, no final evaluation), and reads the steps and seconds
that train prints at its end; the SPS of a task is compared with TimeTrack symbolic's of the same
round, so slow drifts of a shared machine touch both sides of a ratio alike.

    python scripts/bench_task_throughput.py --agent lstm --steps 600000 --rounds 2

With --env-alone each round also steps each task's env by itself (the run's Gymnasium vector env of
`envs_per_actor` envs, as one actor builds it, random actions, one process), so that the table says
whether the env bounds training: an actor cannot step faster than its env alone.

    python scripts/bench_task_throughput.py --import popgym --env-alone \
        --tasks popgym-CountRecallEasy-v0 popgym-RepeatPreviousEasy-v0 --steps 300000
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
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
    parser.add_argument(
        "--import", dest="imports", action="append", default=[], metavar="MODULE",
        help="a module that registers the tasks (passed to train; repeatable), e.g. popgym",
    )  # fmt: skip
    parser.add_argument(
        "--env-alone", action="store_true",
        help="also the steps per second of each task's env alone (as one actor steps it)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    if BASELINE not in args.tasks:
        args.tasks.insert(0, BASELINE)
    return args


def steps_per_second(agent: str, env_id: str, steps: int, logdir: Path, imports: list[str]) -> float:
    """Train `agent` on `env_id` for `steps` steps; the SPS its final line reports."""
    observation = ["--obs", "symbolic"] if env_id in GRIDWORLDS else []
    import_options = [option for module in imports for option in ("--import", module)]
    command = [
        sys.executable, "-m", "nalu_rl.train", *import_options, "--agent", agent, "--env-id", env_id,
        *observation, "--total-steps", str(steps), "--eval-episodes", "0", "--no-progress",
        "--logdir", str(logdir),
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True)
    match = FINAL_LINE.search(finished.stderr + finished.stdout)
    if finished.returncode != 0 or match is None:
        tail = (finished.stderr or finished.stdout).strip().splitlines()[-1:]
        raise SystemExit(f"train on {env_id} failed (exit {finished.returncode}): {' '.join(tail)}")
    return int(match.group(1).replace(",", "")) / float(match.group(2))


def env_alone_steps_per_second(env_id: str, config_path: Path, imports: list[str], steps: int) -> float:
    """Steps per second of `env_id`'s vector env alone, as the run of `config_path` built one actor's
    (`envs_per_actor` envs through the run's environment), random actions, for about `steps` steps."""
    from nalu_rl.config import Config
    from nalu_rl.environment import RunEnvironment

    for module in imports:
        importlib.import_module(module)
    config = Config.from_dict(json.loads(config_path.read_text()))
    with RunEnvironment.from_config(config.to_dict()) as environment:
        env = environment.make_vector(config.envs_per_actor)
    env.action_space.seed(0)
    env.reset(seed=0)
    batches = max(1, steps // env.num_envs)
    started = time.perf_counter()
    for _ in range(batches):
        env.step(env.action_space.sample())
    seconds = time.perf_counter() - started
    env.close()
    return batches * env.num_envs / seconds


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sps: dict[str, list[float]] = {task: [] for task in args.tasks}
    alone: dict[str, list[float]] = {task: [] for task in args.tasks}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(args.rounds):
            for task in args.tasks:
                logdir = Path(folder) / f"{round_index}-{task.replace('/', '-')}"
                sps[task].append(steps_per_second(args.agent, task, args.steps, logdir, args.imports))
                line = f"round {round_index}: {task}: {sps[task][-1]:,.0f} SPS"
                if args.env_alone:
                    config_path = logdir / "config.json"
                    alone[task].append(
                        env_alone_steps_per_second(task, config_path, args.imports, args.steps)
                    )
                    line += f", env alone {alone[task][-1]:,.0f} steps/s"
                print(line, flush=True)
    print(f"\n{args.agent}, {args.steps:,} steps a run, {args.rounds} rounds; ratio to {BASELINE} per round")
    env_column = f" {'env alone':>11} {'train/env':>9}" if args.env_alone else ""
    print(f"{'task':<36} {'median SPS':>11}{env_column}  ratio per round")
    for task in args.tasks:
        ratios = [value / base for value, base in zip(sps[task], sps[BASELINE], strict=True)]
        median = statistics.median(sps[task])
        env_figures = ""
        if args.env_alone:
            env_median = statistics.median(alone[task])
            env_figures = f" {env_median:>11,.0f} {median / env_median:>9.2f}"
        print(f"{task:<36} {median:>11,.0f}{env_figures}  " + " ".join(f"{ratio:.2f}" for ratio in ratios))


if __name__ == "__main__":
    main()
