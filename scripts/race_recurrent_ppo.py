"""A race at equal wall-clock: nalu_rl's `lstm` on train's defaults against sb3-contrib's RecurrentPPO
(`MlpLstmPolicy`, its defaults) on a panel of environments no one here tuned for.

Each (env, system, seed) trains alone on the machine for --budget-s seconds of wall-clock, one after
another, so both systems get the same cores. The score is the mean return of the last 100 finished
episodes (SB3's own episode buffer; nalu_rl with `--success-window 100`, which only sets the window
of its reports). Each run's curve (steps, seconds since the process started, that mean return) goes
to DATA_DIR/<env>/<system>/seed<k>.csv; `--table` prints, from those CSVs alone, the return at the
budget, the steps used and the steps to the env's threshold, per seed and as means with 95%
t-intervals.

    pip install -e ".[race]"
    python scripts/race_recurrent_ppo.py --seeds 0 1 2 --budget-s 90 [--envs cartpole memory ...]
    python scripts/race_recurrent_ppo.py --table docs/data/race
    python scripts/race_recurrent_ppo.py --nalu-options "--envs-per-actor 16" --data-dir docs/data/race-envs16

The panel: CartPole-v1; the one-step memory task of the tests (tests/memory_task.py); FrozenLake-v1
(slippery 4x4); MiniGrid MemoryS7 through examples/minigrid_memory.py (SB3 reads its 7x7x3 image as a
float vector: its image extractor needs frames of 36x36 or more). On request (`--envs countrecall
repeatprevious repeatfirst`, needs `pip install -e ".[popgym]"`): POPGym's CountRecall, RepeatPrevious
and RepeatFirst at Easy, whose returns lie in [-1, 1].
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EPISODE_WINDOW = 100
SYSTEMS = ("nalu_rl", "recurrent_ppo")


@dataclass(frozen=True)
class RaceEnv:
    """One env of the panel: its Gymnasium id, the module that registers it (with the folder that
    holds the module), and the mean return over the last 100 episodes that counts as learned."""

    env_id: str
    threshold: float
    module: str = ""
    module_folder: str = ""


PANEL = {
    "cartpole": RaceEnv("CartPole-v1", threshold=400.0),
    "memory": RaceEnv(
        "nalu_rl_tests/OneStepMemory-v0", threshold=44.1, module="memory_task", module_folder="tests"
    ),
    "frozenlake": RaceEnv("FrozenLake-v1", threshold=0.6),
    "minigrid": RaceEnv(
        "minigrid_memory/MemoryS7-v0", threshold=0.8, module="minigrid_memory", module_folder="examples"
    ),
}
DEFAULT_PANEL = tuple(PANEL)
# POPGym's Easy tasks (`pip install -e ".[popgym]"`): a return in [-1, 1], learned at 0.9 (docs/POPGYM.md).
POPGYM_EASY = {
    "countrecall": RaceEnv("popgym-CountRecallEasy-v0", threshold=0.9, module="popgym"),
    "repeatprevious": RaceEnv("popgym-RepeatPreviousEasy-v0", threshold=0.9, module="popgym"),
    "repeatfirst": RaceEnv("popgym-RepeatFirstEasy-v0", threshold=0.9, module="popgym"),
}
PANEL.update(POPGYM_EASY)


def write_curve(path: Path, rows: list[dict[str, float]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=["steps", "seconds", "episode_return"])
        writer.writeheader()
        writer.writerows(rows)


class RunFailed(Exception):
    """A run of the race ended with an error; the message names the system and its last line."""


def last_line(text: str) -> str:
    """The last non-empty line of `text` (a command's one-line error, or a traceback's exception)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def child_environment(env: RaceEnv) -> dict[str, str]:
    """The environment of a run's process: the env's module folder on PYTHONPATH, two CPU threads."""
    environment = dict(os.environ)
    if env.module_folder:
        folder = str(ROOT / env.module_folder)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, environment.get("PYTHONPATH", "")]))
    return environment


def run_nalu_rl(
    env: RaceEnv, seed: int, budget_s: float, options: tuple[str, ...] = ()
) -> list[dict[str, float]]:
    """Train nalu_rl's `lstm` on train's defaults (and `options`) for `budget_s` seconds; its curve
    from TensorBoard."""
    from nalu_rl.run_scalars import read_series

    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "nalu_rl.train", "--env-id", env.env_id, "--agent", "lstm"]
        command += ["--seed", str(seed), "--time-budget-s", str(budget_s), "--logdir", folder]
        command += ["--success-window", str(EPISODE_WINDOW), "--log-interval-s", "1", "--eval-episodes", "0"]
        command += ["--no-progress"] + (["--import", env.module] if env.module else []) + list(options)
        started = time.time()
        finished = subprocess.run(command, env=child_environment(env), capture_output=True, text=True)
        if finished.returncode != 0:
            error = last_line(finished.stderr)
            raise RunFailed(f"nalu_rl.train failed (exit {finished.returncode}): {error}")
        series = read_series(folder, ["charts/episodes", "charts/episode_return"])
        episodes = {point.step: point.value for point in series.get("charts/episodes", [])}
        return [
            {
                "steps": point.step,
                "seconds": round(point.wall_time - started, 2),
                "episode_return": round(point.value, 6),
            }
            for point in series.get("charts/episode_return", [])
            if episodes.get(point.step, 0) >= 1
        ]


SB3_RUN = r"""
import json, sys, time
started = time.time()
import gymnasium
import numpy as np
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

env_id, module = sys.argv[1], sys.argv[2]
seed, budget_s, window = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
if module:
    __import__(module)


class ImageAsFloat(gymnasium.ObservationWrapper):
    # A Dict's uint8 `image` as float32, so that SB3 flattens it instead of choosing its CNN.
    def __init__(self, env):
        super().__init__(env)
        spaces = dict(env.observation_space.spaces)
        image = spaces["image"]
        spaces["image"] = gymnasium.spaces.Box(0.0, 255.0, image.shape, np.float32)
        self.observation_space = gymnasium.spaces.Dict(spaces)

    def observation(self, observation):
        return {**observation, "image": observation["image"].astype(np.float32)}


class MultiDiscreteAsOneHot(gymnasium.ObservationWrapper):
    # A MultiDiscrete observation as the concatenated one-hot codes SB3 would make of it itself; its
    # own path hands the LSTM a numpy int as input size, which torch refuses.
    def __init__(self, env):
        super().__init__(env)
        self.sizes = [int(size) for size in env.observation_space.nvec]
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (sum(self.sizes),), np.float32)

    def observation(self, observation):
        codes = [np.eye(size, dtype=np.float32)[value] for size, value in zip(self.sizes, observation)]
        return np.concatenate(codes)


def wrap(env):
    if isinstance(env.observation_space, gymnasium.spaces.MultiDiscrete):
        return MultiDiscreteAsOneHot(env)
    spaces = getattr(env.observation_space, "spaces", None)
    return ImageAsFloat(env) if isinstance(spaces, dict) and "image" in spaces else env


class Clock(BaseCallback):
    def __init__(self):
        super().__init__()
        self.rows = []

    def _on_step(self):
        return time.time() - started < budget_s

    def _on_rollout_end(self):
        self.record()

    def record(self):
        # One row: the steps so far, the seconds since start, the mean return of the recent episodes.
        buffer = self.model.ep_info_buffer
        if buffer:
            mean = float(np.mean([info["r"] for info in list(buffer)[-window:]]))
            self.rows.append({"steps": self.model.num_timesteps, "seconds": round(time.time() - started, 2),
                              "episode_return": round(mean, 6)})


vec_env = make_vec_env(env_id, n_envs=1, seed=seed, wrapper_class=wrap)
dict_observation = isinstance(vec_env.observation_space, gymnasium.spaces.Dict)
policy = "MultiInputLstmPolicy" if dict_observation else "MlpLstmPolicy"
model = RecurrentPPO(policy, vec_env, seed=seed, verbose=0)
clock = Clock()
model.learn(total_timesteps=10**9, callback=clock)
clock.record()
print(json.dumps(clock.rows))
"""


def run_recurrent_ppo(env: RaceEnv, seed: int, budget_s: float) -> list[dict[str, float]]:
    """Train sb3-contrib's RecurrentPPO on its defaults for `budget_s` seconds; its curve."""
    command = [
        sys.executable,
        "-c",
        SB3_RUN,
        env.env_id,
        env.module,
        str(seed),
        str(budget_s),
        str(EPISODE_WINDOW),
    ]
    finished = subprocess.run(command, env=child_environment(env), capture_output=True, text=True)
    if finished.returncode != 0:
        raise RunFailed(f"RecurrentPPO failed (exit {finished.returncode}): {last_line(finished.stderr)}")
    return json.loads(finished.stdout.strip().splitlines()[-1])


def read_curve(path: Path) -> list[dict[str, float]]:
    with path.open(newline="") as file:
        return [{key: float(value) for key, value in row.items()} for row in csv.DictReader(file)]


def mean_interval(values: list[float]) -> str:
    """`mean [low, high]` with a 95% t-interval (the mean alone for one value)."""
    from nalu_rl.stats import t_interval

    if len(values) < 2:
        return f"{values[0]:.3g}"
    mean, low, high = t_interval(values)
    return f"{mean:.3g} [{low:.3g}, {high:.3g}]"


def steps_to(curve: list[dict[str, float]], value: float) -> float | None:
    """The steps of a curve's first row whose return reaches `value` (None: never)."""
    return next((row["steps"] for row in curve if row["episode_return"] >= value), None)


def table(data_dir: Path) -> str:
    """The race table, from the per-seed CSVs under `data_dir` only."""
    curves = {
        (name, system): {
            path.stem: read_curve(path) for path in sorted((data_dir / name / system).glob("seed*.csv"))
        }
        for name in PANEL
        for system in SYSTEMS
    }
    lines = [
        "| env | system | seeds | return at the budget | steps used "
        "| steps to the threshold (runs that reached it) |",
        "|---|---|---|---|---|---|",
    ]
    for name, env in PANEL.items():
        for system in SYSTEMS:
            runs = list(curves[name, system].values())
            if not runs:
                continue
            finals = [curve[-1]["episode_return"] if curve else math.nan for curve in runs]
            steps = [curve[-1]["steps"] if curve else 0.0 for curve in runs]
            hits = [
                value for value in (steps_to(curve, env.threshold) for curve in runs) if value is not None
            ]
            to_threshold = (
                f"{mean_interval(hits)} ({len(hits)} of {len(runs)})" if hits else f"- (0 of {len(runs)})"
            )
            per_seed = ", ".join(f"{value:.3g}" for value in finals)
            lines.append(
                f"| {env.env_id} (threshold {env.threshold:g}) | {system} | {len(runs)} | "
                f"{mean_interval(finals)} ({per_seed}) | {mean_interval(steps)} | {to_threshold} |"
            )
    lines += [
        "",
        "| env | seed | RecurrentPPO at the budget: steps, return | nalu_rl: steps to that return | ratio |",
        "|---|---|---|---|---|",
    ]
    for name, env in PANEL.items():
        ratios, compared = [], 0
        own_curves = curves[name, "nalu_rl"]
        for seed, peer in curves[name, "recurrent_ppo"].items():
            if not peer or seed not in own_curves:
                continue
            steps, reached = peer[-1]["steps"], peer[-1]["episode_return"]
            own = steps_to(own_curves[seed], reached)
            compared += 1
            ratio = "never" if own is None else f"{own / steps:.2f}"
            if own is not None:
                ratios.append(own / steps)
            own_steps = "not reached" if own is None else f"{own:,.0f}"
            lines.append(
                f"| {env.env_id} | {seed[4:]} | {steps:,.0f}, {reached:.3g} | {own_steps} | {ratio} |"
            )
        if ratios:
            # A seed that never reached the peer's return has no ratio: the mean says it leaves it out.
            label = "mean" if len(ratios) == compared else f"mean of {len(ratios)} of {compared} (reached)"
            within = sum(ratio <= 2.0 for ratio in ratios)
            lines.append(
                f"| {env.env_id} | {label} | | | {mean_interval(ratios)} ({within} of {compared} within 2x) |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--envs", nargs="+", default=list(DEFAULT_PANEL), choices=list(PANEL),
        help=f"the envs to race (default: {' '.join(DEFAULT_PANEL)}; POPGym's Easy tasks: "
        f"{' '.join(POPGYM_EASY)}, with popgym installed)",
    )  # fmt: skip
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--budget-s", type=float, default=90.0, help="wall-clock seconds of each run")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "docs/data/race")
    parser.add_argument(
        "--nalu-options",
        default="",
        help='train options over nalu_rl\'s defaults, e.g. "--envs-per-actor 16" (one string)',
    )
    parser.add_argument(
        "--table", type=Path, metavar="DATA_DIR", help="print the table from DATA_DIR's CSVs and stop"
    )
    arguments = parser.parse_args(argv)
    if arguments.table is not None:
        print(table(arguments.table))
        return 0
    nalu_options = tuple(shlex.split(arguments.nalu_options))
    runners = {"nalu_rl": partial(run_nalu_rl, options=nalu_options), "recurrent_ppo": run_recurrent_ppo}
    for name in arguments.envs:
        for seed in arguments.seeds:
            for system in arguments.systems:
                target = arguments.data_dir / name / system / f"seed{seed}.csv"
                if target.exists():
                    print(f"{name} {system} seed {seed}: kept {target}", flush=True)
                    continue
                started = time.time()
                try:
                    rows = runners[system](PANEL[name], seed, arguments.budget_s)
                except RunFailed as error:
                    print(f"race_recurrent_ppo.py: {name} seed {seed}: {error}", file=sys.stderr)
                    return 1
                write_curve(target, rows)
                last = rows[-1] if rows else {}
                print(
                    f"{name} {system} seed {seed}: {time.time() - started:.0f} s, "
                    f"{last.get('steps', 0):,.0f} steps, "
                    f"return {last.get('episode_return', float('nan')):.3f}",
                    flush=True,
                )
    print(table(arguments.data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
