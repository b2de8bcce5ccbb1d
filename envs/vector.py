"""Native vector envs of the timing gridworlds: `num_envs` envs stepped together with numpy, no Python loop.

`TimingGridVectorEnv` holds the batching, seeding and autoreset; `TimeTrackVectorEnv` and
`IntervalTimingVectorEnv` name the task (its config class and metadata), as the single envs do.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nalu_rl.envs.arguments import actions_argument
from nalu_rl.envs.episode_starts import VectorEpisodeStart
from nalu_rl.envs.interval_timing import IntervalTimingEnv
from nalu_rl.envs.rendering import EpisodeRenderer
from nalu_rl.envs.rules import (
    NO_OUTCOME,
    NUM_ACTIONS,
    OUTCOME_NAMES,
    SUCCESS,
    EpisodeBatch,
    GridTaskConfig,
    IntervalTimingConfig,
    TimeTrackConfig,
    integer_argument,
)
from nalu_rl.envs.time_track import TimeTrackEnv
from nalu_rl.envs.timing_grid import ObservationMaker, TimingTaskAttributes, observation_space


class TimingGridVectorEnv(TimingTaskAttributes, VectorEpisodeStart, VectorEnv):
    """`num_envs` independent envs of one timing gridworld advanced as one batch.

    A subclass names the task's `config_class` and `metadata`. Env i of a vector env reset with
    `seed` plays exactly like the task's single env reset with `seed + i` and fed the same actions.
    Autoreset is NEXT_STEP: the step after an env's episode ends starts a new episode there, ignores
    that env's action and returns its first observation with reward 0. Infos are arrays over envs:
    `delay`, `t`, `distance` always, `outcome` (str, "" where no episode ended) and `success` (bool),
    each with its `_key` mask (`_outcome` and `_success` true where an episode ended). Rewards are
    float32. Rendering shows env 0.
    """

    config_class: ClassVar[type[GridTaskConfig]]
    window_title: ClassVar[str] = "timing task"

    def __init__(self, num_envs: int, **options: Any) -> None:
        num_envs = integer_argument("num_envs", num_envs)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs!r}")
        self.config = self.config_class(**options)
        self.num_envs = num_envs
        self.render_mode = self.config.render_mode
        self.single_observation_space = observation_space(self.config)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, NUM_ACTIONS))
        self._batch = EpisodeBatch(self.config, num_envs)
        self._observe = ObservationMaker(self.config)
        self._init_episode_start(num_envs)
        self._renderer = EpisodeRenderer(self.render_mode, self.config.size, self.window_title)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode in every env; env i is seeded `seed + i`; `options["delay"]` fixes T for all."""
        super().reset(seed=seed)
        self._start_every_episode(seed, options)
        if self.render_mode == "human":
            self.render()
        return self._observe(self._batch), self._infos(None)

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every env by one action (an int array of shape (num_envs,)); see the class docstring."""
        if self._uniforms is None:
            raise RuntimeError("the vector env has not been reset: call reset() first")
        actions = actions_argument(actions, self.num_envs, NUM_ACTIONS)
        reward, terminated, outcome = self._advance_every_env(actions)
        if self.render_mode == "human":
            self.render()
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._observe(self._batch), reward, terminated.copy(), truncated, self._infos(outcome)

    def _infos(self, outcome: np.ndarray | None) -> dict[str, Any]:
        batch = self._batch
        infos = {
            "delay": batch.delay.copy(),
            "_delay": self._all_true.copy(),
            "t": batch.t.copy(),
            "_t": self._all_true.copy(),
            "distance": batch.distance(),
            "_distance": self._all_true.copy(),
        }
        if outcome is None:
            outcome = np.full(self.num_envs, NO_OUTCOME, dtype=np.int8)
        ended = outcome != NO_OUTCOME
        infos["outcome"] = OUTCOME_NAMES[outcome]
        infos["_outcome"] = ended
        infos["success"] = outcome == SUCCESS
        infos["_success"] = ended.copy()
        return infos

    def render(self) -> np.ndarray | None:
        """An RGB frame (rgb_array mode) or a window update (human mode) of env 0."""
        return self._renderer.render(
            self._batch, 0, str(OUTCOME_NAMES[self._outcome_code[0]]), self.metadata["render_fps"]
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Close the window, if any."""
        self._renderer.close()


def _vector_metadata(single_env: type) -> dict[str, Any]:
    """The metadata of a task's vector env: its single env's, with NEXT_STEP autoreset."""
    return {**single_env.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}


class TimeTrackVectorEnv(TimingGridVectorEnv):
    """`num_envs` independent TimeTrack envs (see `TimeTrackEnv`) advanced as one batch.

    The keyword arguments are those of `TimeTrackEnv`: the fields of `TimeTrackConfig`. See
    `TimingGridVectorEnv` for seeding, autoreset and infos.
    """

    metadata = _vector_metadata(TimeTrackEnv)
    config_class = TimeTrackConfig
    window_title = TimeTrackEnv.window_title


class IntervalTimingVectorEnv(TimingGridVectorEnv):
    """`num_envs` independent IntervalTiming envs (see `IntervalTimingEnv`) advanced as one batch.

    The keyword arguments are those of `IntervalTimingEnv`: the fields of `IntervalTimingConfig`.
    See `TimingGridVectorEnv` for seeding, autoreset and infos.
    """

    metadata = _vector_metadata(IntervalTimingEnv)
    config_class = IntervalTimingConfig
    window_title = IntervalTimingEnv.window_title
