"""A one-step memory task of the tests' own, registered with Gymnasium as `nalu_rl_tests/OneStepMemory-v0`
(import this module, or give it to `train --import memory_task` with tests/ on the path).

Each step shows one of `symbols` symbols, drawn uniformly, as a one-hot Box; the reward is 1 when
the action names the symbol shown `lag` steps before (lag 1: the previous step's, which only a
memory can know; lag 0: the current one), else 0. An episode lasts `episode_steps` steps; its best
return is `episode_steps - lag`, a random policy's (episode_steps - lag) / symbols.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

ENV_ID = "nalu_rl_tests/OneStepMemory-v0"


class OneStepMemoryEnv(gymnasium.Env):
    """Name the symbol shown `lag` steps ago (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, symbols: int = 4, episode_steps: int = 50, lag: int = 1) -> None:
        self.symbols = symbols
        self.episode_steps = episode_steps
        self.lag = lag
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (symbols,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(symbols)
        self.shown: list[int] = []

    def _observation(self) -> np.ndarray:
        observation = np.zeros(self.symbols, np.float32)
        observation[self.shown[-1]] = 1.0
        return observation

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.shown = [int(self.np_random.integers(self.symbols))]
        return self._observation(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        step = len(self.shown) - 1
        reward = float(step >= self.lag and int(action) == self.shown[step - self.lag])
        self.shown.append(int(self.np_random.integers(self.symbols)))
        truncated = step + 1 >= self.episode_steps
        return self._observation(), reward, False, truncated, {}

    def best_return(self) -> float:
        """The largest return of an episode."""
        return float(self.episode_steps - self.lag)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=OneStepMemoryEnv)
