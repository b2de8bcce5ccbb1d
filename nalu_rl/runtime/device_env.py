"""The timing tasks as tensors: TimeTrack and IntervalTiming stepped and drawn on any torch device.

`TimingTensorEnv` holds `num_envs` episodes as int64 tensors on a device and runs the rules of
`nalu_rl.envs.rules` (`start_episodes`, `advance_episodes`, `TimingRule.stimulus_value`) with torch
as their array namespace, and draws the observations with `nalu_rl.envs.drawing`'s layout and index
writes: the same lines as the numpy envs, so the two cannot drift apart. Nothing leaves the device.

Where the numpy vector env draws each env's placement and delay from that env's own generator, a
tensor env draws them from a `uniforms` source: `DeviceUniforms` (one torch generator on the device,
the default) or `NumpyStreamUniforms` (exactly the draws of the numpy vector env with the same seed,
copied from the host), with which a tensor env plays exactly the episodes of that vector env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import torch

from nalu_rl.envs.drawing import PixelPainter, mark_cells, paint_cell_blocks
from nalu_rl.envs.rules import (
    NO_OUTCOME,
    UNIFORMS_PER_EPISODE,
    EnvUniformStreams,
    GridTaskConfig,
    RuleTables,
    advance_episodes,
    start_episodes,
)
from nalu_rl.envs.timing_grid import observation_space

# A uniforms source: given which envs start an episode (bool, shape (num_envs,)), a float64 tensor
# of shape (num_envs, 2) whose rows for those envs are their draws (the other rows are not read).
UniformSource = Callable[[torch.Tensor], torch.Tensor]


class DeviceUniforms:
    """Uniforms drawn on the device from one torch generator seeded `seed` (a row for every env at
    every call; only the starting envs' rows are used)."""

    def __init__(self, num_envs: int, device: torch.device | str, seed: int) -> None:
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)

    def __call__(self, starting: torch.Tensor) -> torch.Tensor:
        """(num_envs, 2) float64 uniforms in [0, 1)."""
        return torch.rand(
            (self.num_envs, UNIFORMS_PER_EPISODE),
            generator=self.generator,
            dtype=torch.float64,
            device=self.device,
        )


class NumpyStreamUniforms:
    """The draws of the numpy vector env seeded `seed` (env i from its generator seeded `seed + i`),
    copied to the device: a tensor env fed by it plays the episodes of that vector env. It reads
    which envs start on the host, once per step (for tests and debugging, not for speed)."""

    def __init__(self, num_envs: int, device: torch.device | str, seed: int) -> None:
        self.streams = EnvUniformStreams(num_envs, seed)
        self.device = torch.device(device)
        self.rows = np.zeros((num_envs, UNIFORMS_PER_EPISODE))

    def __call__(self, starting: torch.Tensor) -> torch.Tensor:
        """(num_envs, 2) float64: the next draw of each starting env, zeros elsewhere."""
        envs = np.flatnonzero(starting.cpu().numpy())
        self.rows[:] = 0.0
        if len(envs):
            self.rows[envs] = self.streams.next(envs)
        return torch.as_tensor(self.rows, device=self.device)


class TimingTensorEnv:
    """`num_envs` episodes of a timing gridworld (its validated `GridTaskConfig`) as tensors on `device`.

    The tensor counterpart of the numpy vector env (`nalu_rl.envs.vector`): same rules, same
    observations (dicts of `pixels` (n, H, W, 3) uint8 or `grid` (n, 2, size, size) uint8, and
    `stimulus` (n, 1) float32), same NEXT_STEP autoreset: the step after an env's episode ends starts
    a new episode there, ignores that env's action and returns reward 0, not terminated. The state
    (`agent`, `target`, `delay`, `t`, int64) is readable between steps; `distance()` as in the infos.
    """

    def __init__(
        self,
        config: GridTaskConfig,
        num_envs: int,
        device: torch.device | str,
        uniforms: UniformSource,
    ) -> None:
        self.config = config
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.uniforms = uniforms
        self.single_observation_space: gymnasium.spaces.Dict = observation_space(config)
        numpy_tables = RuleTables.for_grid(config.size)
        self.tables = RuleTables(
            *(torch.as_tensor(table, device=self.device) for table in vars(numpy_tables).values())
        )
        self.envs = torch.arange(num_envs, device=self.device)
        self.pixels = config.obs_mode == "pixels"
        if self.pixels:
            painter = PixelPainter(config.size, config.cell_px)
            self.frame_shape = painter.shape
            background, offsets, agent_block, target_block = painter.byte_layout()
            self.background = torch.as_tensor(background, device=self.device)
            self.cell_offsets = torch.as_tensor(offsets, device=self.device)
            self.agent_block = torch.as_tensor(agent_block, device=self.device)
            self.target_block = torch.as_tensor(target_block, device=self.device)
        zeros = torch.zeros(num_envs, dtype=torch.int64, device=self.device)
        self.agent, self.target, self.delay, self.t = zeros, zeros + 1, zeros + config.delay_range[0], zeros
        self.episode_ended = torch.zeros(num_envs, dtype=torch.bool, device=self.device)

    def _start(self, starting: torch.Tensor) -> None:
        """New episodes in the envs where `starting` is True."""
        agent, target, delay = start_episodes(torch, self.config, self.uniforms(starting))
        self.agent = torch.where(starting, agent, self.agent)
        self.target = torch.where(starting, target, self.target)
        self.delay = torch.where(starting, delay, self.delay)
        self.t = torch.where(starting, 0, self.t)

    def reset(self) -> dict[str, torch.Tensor]:
        """Start an episode in every env; the first observations."""
        self._start(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))
        self.episode_ended.zero_()
        return self.observe()

    def step(
        self, actions: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor]:
        """Advance every env by one action (int64, shape (num_envs,), on the device): (observations,
        reward float32, terminated bool, outcome code int8: an index of OUTCOMES, NO_OUTCOME while
        an episode runs)."""
        restarting = self.episode_ended
        self.agent, self.t, reward, terminated, outcome = advance_episodes(
            torch, self.config, self.tables, self.agent, self.target, self.delay, self.t, actions
        )
        self._start(restarting)
        reward = torch.where(restarting, 0.0, reward)
        terminated = terminated & ~restarting
        outcome = torch.where(restarting, NO_OUTCOME, outcome).to(torch.int8)
        self.episode_ended = terminated
        return self.observe(), reward, terminated, outcome

    def observe(self) -> dict[str, torch.Tensor]:
        """New observation tensors of the current state (see the class docstring)."""
        stimulus = self.config.rule.stimulus_value(self.delay, self.t, xp=torch)[:, None]
        if self.pixels:
            frames = self.background.expand(self.num_envs, -1).clone()
            paint_cell_blocks(
                frames,
                self.envs,
                self.cell_offsets,
                self.agent,
                self.target,
                self.agent_block,
                self.target_block,
            )
            return {"pixels": frames.view(self.num_envs, *self.frame_shape), "stimulus": stimulus}
        size = self.config.size
        grid = torch.zeros((self.num_envs, 2, size * size), dtype=torch.uint8, device=self.device)
        mark_cells(grid, self.envs, self.agent, self.target)
        return {"grid": grid.view(self.num_envs, 2, size, size), "stimulus": stimulus}

    def distance(self) -> torch.Tensor:
        """Manhattan distance between agent and target, per env."""
        return self.tables.cell_distance[self.agent, self.target]


def make_tensor_env(
    config: Any, num_envs: int, device: torch.device | str, seed: int, uniforms: type = DeviceUniforms
) -> TimingTensorEnv:
    """The tensor env of a run's timing task (`config`: a `Config`; InputError, one line, for an env
    that is not a timing gridworld), its uniforms from `uniforms(num_envs, device, seed)`."""
    with config.environment() as environment:
        task = environment.grid_task_config()
    return TimingTensorEnv(task, num_envs, device, uniforms(num_envs, device, seed))
