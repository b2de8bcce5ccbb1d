"""Steps per second of TimeTrack: the single env and the native vector env, both observation modes.

Random actions, episodes restarting as they end (reset for the single env, autoreset for the vector
env). Pin it to one core for figures that compare: `taskset -c 1 python scripts/bench_env.py`.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from nalu_rl.envs import TimeTrackEnv, TimeTrackVectorEnv

ACTION_BLOCK = 64  # random actions are drawn in blocks, outside the timed region


def single_env_steps_per_second(obs_mode: str, seconds: float) -> float:
    """Steps per second of one TimeTrackEnv, resets included."""
    env = TimeTrackEnv(obs_mode=obs_mode)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 5, ACTION_BLOCK).tolist()
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        start = time.perf_counter()
        for action in actions:
            if env.step(action)[2]:
                env.reset()
        elapsed += time.perf_counter() - start
        steps += len(actions)
    return steps / elapsed


def vector_env_steps_per_second(obs_mode: str, num_envs: int, seconds: float) -> float:
    """Env steps per second (vector steps x num_envs) of a TimeTrackVectorEnv, autoresets included."""
    env = TimeTrackVectorEnv(num_envs, obs_mode=obs_mode)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 5, (ACTION_BLOCK, num_envs))
    for row in actions[:8]:  # warm-up: first allocations
        env.step(row)
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        start = time.perf_counter()
        for row in actions:
            env.step(row)
        elapsed += time.perf_counter() - start
        steps += actions.size
    return steps / elapsed


def main() -> None:
    """Print a Markdown table of steps per second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    parser.add_argument(
        "--num-envs", type=int, nargs="+", default=[1, 4, 16, 64, 256, 1024], help="vector env sizes"
    )
    parser.add_argument("--obs-modes", nargs="+", default=["symbolic", "pixels"], help="observation modes")
    args = parser.parse_args()

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"# TimeTrack steps/s, python {platform.python_version()}, numpy {np.__version__}, cores {cores}")
    print(f"# {args.seconds:g} s timed per row, random actions, default env (5x5, 56x56 pixels)\n")
    print("| env | num_envs | " + " | ".join(f"{mode} steps/s" for mode in args.obs_modes) + " |")
    print("|---|---:|" + "---:|" * len(args.obs_modes))
    row = [f"{single_env_steps_per_second(mode, args.seconds):,.0f}" for mode in args.obs_modes]
    print("| TimeTrackEnv | 1 | " + " | ".join(row) + " |", flush=True)
    for num_envs in args.num_envs:
        row = [f"{vector_env_steps_per_second(mode, num_envs, args.seconds):,.0f}" for mode in args.obs_modes]
        print(f"| TimeTrackVectorEnv | {num_envs} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
