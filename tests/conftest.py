"""Fixtures shared by the tests of the command lines: tiny untrained checkpoints and exit codes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch

from agents import make_agent
from envs import TimeTrackEnv
from nalu_rl.checkpoint import save_checkpoint
from nalu_rl.cli import run_cli

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
