"""Inputs of the agent tests: TimeTrack spaces, random observations and episode starts, a warm state."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces

from nalu_rl.agents import ActorCritic

MAX_DELAY = 1000
GRID_SIZE = 5


def observation_space(mode: str) -> spaces.Dict:
    """The TimeTrack observation space for obs mode "pixels" or "symbolic"."""
    stimulus = spaces.Box(0, MAX_DELAY, (1,), np.float32)
    if mode == "pixels":
        return spaces.Dict({"pixels": spaces.Box(0, 255, (56, 56, 3), np.uint8), "stimulus": stimulus})
    return spaces.Dict({"grid": spaces.Box(0, 1, (2, GRID_SIZE, GRID_SIZE), np.uint8), "stimulus": stimulus})


def random_observations(space: spaces.Dict, steps: int, batch: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """[steps, batch] observations: random images or grids, a stimulus of 1..40 at random steps, else 0."""
    generator = torch.Generator().manual_seed(seed)
    obs = {}
    if "pixels" in space.spaces:
        obs["pixels"] = torch.randint(
            0, 256, (steps, batch, 56, 56, 3), dtype=torch.uint8, generator=generator
        )
    else:
        obs["grid"] = torch.randint(0, 2, (steps, batch, 2, GRID_SIZE, GRID_SIZE), generator=generator).to(
            torch.uint8
        )
    onset = torch.rand(steps, batch, 1, generator=generator) < 0.3
    delays = torch.randint(1, 41, (steps, batch, 1), generator=generator).float()
    obs["stimulus"] = torch.where(onset, delays, torch.zeros_like(delays))
    return obs


def random_starts(steps: int, batch: int, seed: int = 1) -> torch.Tensor:
    """A bool [steps, batch] episode-start mask with starts scattered at random steps."""
    return torch.rand(steps, batch, generator=torch.Generator().manual_seed(seed)) < 0.25


def warm_state(model: ActorCritic, space: spaces.Dict, batch: int) -> tuple[torch.Tensor, ...]:
    """A non-zero recurrent state: the state after a few steps from the zero state."""
    obs = random_observations(space, 3, batch, seed=99)
    with torch.no_grad():
        _, _, state = model(obs, torch.zeros(3, batch, dtype=torch.bool), model.initial_state(batch))
    return state


def slice_obs(
    obs: dict[str, torch.Tensor], times: slice, batch: slice = slice(None)
) -> dict[str, torch.Tensor]:
    return {key: value[times, batch] for key, value in obs.items()}
