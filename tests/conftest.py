"""Helpers shared by the test files: tiny untrained checkpoints, exit codes, an easy training setting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

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
