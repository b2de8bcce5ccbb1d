"""What the timing gridworlds' single envs share: spaces, observations, seeding, stepping, rendering.

Each task (TimeTrack, IntervalTiming) is a subclass that names its config class (and with it its
`TimingRule`) and its run options; everything else is here, and the rules are in `rules.py`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nalu_rl.envs.arguments import action_argument
from nalu_rl.envs.drawing import PixelPainter, paint_grid
from nalu_rl.envs.episode_starts import SingleEpisodeStart
from nalu_rl.envs.rendering import EpisodeRenderer
from nalu_rl.envs.rules import (
    NO_OUTCOME,
    NUM_ACTIONS,
    OUTCOMES,
    EpisodeBatch,
    GridTaskConfig,
    success_ceiling,
)
from nalu_rl.envs.task import ConfiguredDelays

RENDER_FPS = 4


def observation_space(config: GridTaskConfig) -> spaces.Dict:
    """The observation space of one env with this configuration."""
    if config.obs_mode == "pixels":
        side = (config.size + 2) * config.cell_px
        view = ("pixels", spaces.Box(0, 255, (side, side, 3), np.uint8))
    else:
        view = ("grid", spaces.Box(0, 1, (2, config.size, config.size), np.uint8))
    stimulus = spaces.Box(0.0, config.rule.stimulus_high(config.max_delay), (1,), np.float32)
    return spaces.Dict({view[0]: view[1], "stimulus": stimulus})


class ObservationMaker:
    """Builds batched observation dicts from an EpisodeBatch, in the configured mode."""

    def __init__(self, config: GridTaskConfig) -> None:
        self.config = config
        self.painter = PixelPainter(config.size, config.cell_px) if config.obs_mode == "pixels" else None

    def __call__(self, batch: EpisodeBatch) -> dict[str, np.ndarray]:
        """New arrays with a leading env axis: `pixels` or `grid`, and `stimulus`."""
        if self.painter is not None:
            return {"pixels": self.painter.paint(batch.agent, batch.target), "stimulus": batch.stimulus()}
        return {"grid": paint_grid(self.config.size, batch.agent, batch.target), "stimulus": batch.stimulus()}


class TimingTaskAttributes(ConfiguredDelays):
    """The timing-task interface's attributes (see `nalu_rl.envs.task`), read from `self.config`."""

    config: GridTaskConfig

    def due_time(self, delay: int) -> int:
        """The step t at which arrival is due at delay T (TimeTrack: T; IntervalTiming: 2T)."""
        return int(self.config.rule.due_time(self.config.checked_delay(delay)))

    def success_ceiling(self, delay: int) -> float:
        """The best possible success rate at delay T: P(distance <= due time) on this env's grid."""
        return success_ceiling(self.due_time(delay), self.config.size)


class TimingGridEnv(TimingTaskAttributes, SingleEpisodeStart, gym.Env):
    """The single env of a timing gridworld; a subclass names its `config_class` and its metadata.

    Actions: 0 UP, 1 DOWN, 2 LEFT, 3 RIGHT, 4 PASS. Arrival at time t ends the episode with reward
    `max(-1, 1 - |t - due| / 2)` (graded) or +-1 (exact); no arrival by due + slack ends it with -1
    (`terminated`, never `truncated`). `info` holds `delay`, `t`, `distance` and, on the last step,
    `outcome` (one of OUTCOMES) and `success` (outcome == "success").
    `reset(options={"delay": T})` fixes T for that episode.
    """

    # A task's metadata adds its "task_options" and "delay_meaning" (nalu_rl.envs.task) to these.
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "human"], "render_fps": RENDER_FPS}
    config_class: ClassVar[type[GridTaskConfig]]
    window_title: ClassVar[str] = "timing task"

    def __init__(self, **options: Any) -> None:
        self.config = self.config_class(**options)
        self.render_mode = self.config.render_mode
        self.observation_space = observation_space(self.config)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._batch = EpisodeBatch(self.config, 1)
        self._observe = ObservationMaker(self.config)
        self._init_episode_start()
        self._renderer = EpisodeRenderer(self.render_mode, self.config.size, self.window_title)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: random agent and target cells, T from `delay_range` or `options["delay"]`."""
        super().reset(seed=seed)
        self._start_episode(options)
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Take one action; see the class docstring for the rules."""
        if self._needs_reset:
            raise RuntimeError("the episode has ended (or never started): call reset() first")
        action_index = action_argument(action, NUM_ACTIONS)
        reward, terminated, outcome = self._batch.advance(np.array([action_index]))
        ended = bool(terminated[0])
        info = self._info()
        if ended:
            self._outcome = OUTCOMES[outcome[0]] if outcome[0] != NO_OUTCOME else ""
            info["outcome"] = self._outcome
            info["success"] = self._outcome == "success"
            self._needs_reset = True
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward[0]), ended, False, info

    def _observation(self) -> dict[str, np.ndarray]:
        return {key: value[0] for key, value in self._observe(self._batch).items()}

    def _info(self) -> dict[str, Any]:
        batch = self._batch
        return {"delay": int(batch.delay[0]), "t": int(batch.t[0]), "distance": int(batch.distance()[0])}

    def render(self) -> np.ndarray | None:
        """An RGB frame (rgb_array mode) or a window update (human mode) of the current state."""
        return self._renderer.render(self._batch, 0, self._outcome, self.metadata["render_fps"])

    def close(self) -> None:
        """Close the window, if any; safe to call more than once."""
        self._renderer.close()
