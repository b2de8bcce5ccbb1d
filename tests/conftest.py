"""Helpers shared by the test files: tiny untrained checkpoints, exit codes, an easy training setting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

from nalu_rl import train
from nalu_rl.agents import make_agent
from nalu_rl.checkpoint import save_checkpoint
from nalu_rl.cli import run_cli
from nalu_rl.envs import TimeTrackEnv

TINY_ENV_KWARGS = {"size": 5, "obs_mode": "symbolic"}


def write_tiny_checkpoint(path: Path, agent: str) -> Path:
    """An untrained `agent` on the symbolic 5x5 task, saved as a checkpoint at `path`."""
    torch.manual_seed(0)
    model = make_agent(agent, TimeTrackEnv(**TINY_ENV_KWARGS).observation_space)
    config = {"agent": agent, "obs": "symbolic", "seed": 0, "delay_range": [5, 12], "env": TINY_ENV_KWARGS}
    save_checkpoint(path, {"config": config, "model": model.state_dict()})
    return path


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module's tests (tiny models: one thread is faster than several
    competing for busy cores); the count before is restored after the module."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def nac_checkpoint(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("checkpoint") / "nac.pt", "nac")


@pytest.fixture(scope="session")
def lstm_checkpoint(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("checkpoint") / "lstm.pt", "lstm")


def cli_exit_code(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str]) -> int:
    """The exit code of a command line run through `run_cli`."""
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, argv)
    return exit_info.value.code


# The runtimes that run in one process: the learner runtime without actor processes, and the device
# runtime (the task as tensors; with --actors 0 it steps --batch-unrolls x --envs-per-actor envs).
ONE_PROCESS_RUNTIMES = {
    "learner": ["--actors", "0"],
    "device": ["--runtime", "device", "--device", "cpu", "--actors", "0"],
}


def run_cli_capture(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """The exit code and standard error of `python -m nalu_rl.train ARGV`, run in this process."""
    with pytest.raises(SystemExit) as exit_info:
        run_cli(train.main, argv)
    return exit_info.value.code, capsys.readouterr().err


# An easy setting: symbolic grid of 3 x 3, delays 2..3, a high learning rate.
EASY = [
    "--agent", "lstm", "--obs", "symbolic", "--size", "3", "--delay-range", "2", "3",
    "--envs-per-actor", "32", "--unroll-length", "10", "--batch-unrolls", "1", "--learning-rate", "3e-3",
    "--success-window", "300", "--eval-episodes", "0", "--no-progress", "--log-interval-s", "1",
]  # fmt: skip


def random_policy_success_rate(size: int, delay_range: tuple[int, int], episodes: int = 2000) -> float:
    """Success rate of uniformly random actions on the easy setting, measured."""
    from nalu_rl.envs import TimeTrackVectorEnv

    env = TimeTrackVectorEnv(64, size=size, delay_range=delay_range, obs_mode="symbolic")
    env.reset(seed=123)
    rng = np.random.default_rng(0)
    successes = finished = 0
    while finished < episodes:
        _, _, _, _, info = env.step(rng.integers(0, 5, size=64))
        if "_outcome" in info:
            ended = info["_outcome"]
            finished += int(ended.sum())
            successes += int((info["outcome"][ended] == "success").sum())
    return successes / finished


UP, DOWN, LEFT, RIGHT, PASS = range(5)


def path_to_target(obs: dict) -> list[int]:
    """The actions of one shortest path from the agent to the target, read from a symbolic observation."""
    (row, col), (target_row, target_col) = (tuple(np.argwhere(obs["grid"][k])[0]) for k in (0, 1))
    vertical = [DOWN if target_row > row else UP] * abs(target_row - row)
    horizontal = [RIGHT if target_col > col else LEFT] * abs(target_col - col)
    return vertical + horizontal


def play(env, actions: list[int]) -> list[tuple]:
    """Step through `actions`, stopping at the end of the episode; returns each step's result."""
    results = []
    for action in actions:
        results.append(env.step(action))
        if results[-1][2]:
            break
    return results


def arrive_at(env, delay: int, arrival_time: int, seed: int = 3) -> tuple:
    """Reset with delay T, wait, then walk straight to the target so as to arrive at `arrival_time`;
    returns the last step's result."""
    obs, _ = env.reset(seed=seed, options={"delay": delay})
    path = path_to_target(obs)
    assert arrival_time >= len(path), "the test needs a target reachable in time"
    results = play(env, [PASS] * (arrival_time - len(path)) + path)
    assert [r[2] for r in results] == [False] * (len(results) - 1) + [True]
    return results[-1]


def check_vector_env_matches_single_envs(vector, singles: list, steps: int, seed: int) -> set[str]:
    """Step `vector` and `singles` (env i seeded seed + i) with the same random actions, asserting
    every observation, flag and info agree (NEXT_STEP autoreset on the singles' side); returns the
    outcomes seen. Also checks that each env played more episodes than one block of pre-drawn ones."""
    from nalu_rl.envs.rules import EPISODES_PER_DRAW

    num_envs = len(singles)
    vector_obs, vector_info = vector.reset(seed=seed)
    vector_flags = None  # (reward, terminated, truncated) arrays of the last vector step
    single_results = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    ended, episodes, outcomes = [False] * num_envs, [0] * num_envs, set()
    actions_by_step = np.random.default_rng(0).integers(0, 5, (steps, num_envs))
    for step in range(steps + 1):
        for i, (obs, *rest) in enumerate(single_results):
            info = rest[-1]
            for key in obs:
                assert np.array_equal(vector_obs[key][i], obs[key]), (step, i, key)
            for name in ("delay", "t", "distance"):
                assert vector_info[name][i] == info[name] and vector_info[f"_{name}"][i]
            assert vector_info["_outcome"][i] == vector_info["_success"][i] == ("outcome" in info)
            if "outcome" in info:
                assert vector_info["outcome"][i] == info["outcome"]
                assert vector_info["success"][i] == info["success"]
                outcomes.add(info["outcome"])
            if len(rest) == 4:  # a step result: reward, terminated, truncated, info
                assert tuple(flags[i] for flags in vector_flags) == tuple(rest[:3])
        if step == steps:
            break
        actions = actions_by_step[step]
        vector_obs, *vector_flags, vector_info = vector.step(actions)
        single_results = []
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step is the reset; the action is ignored
                obs, info = env.reset()
                single_results.append((obs, 0.0, False, False, info))
                ended[i] = False
                episodes[i] += 1
            else:
                single_results.append(env.step(int(actions[i])))
                ended[i] = single_results[-1][2]
    assert min(episodes) > EPISODES_PER_DRAW
    return outcomes
