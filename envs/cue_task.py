"""The cue tasks: timing tasks whose observation is a few brief cue flags, written once for a batch.

Each cue task (ReadySetGo, ScaledReproduction, IntervalDiscrimination, DistractorReproduction,
ContinuationTapping) is a config class (`CueTaskConfig` subclass) that says which cues show when
and how a press is judged, plus two small env classes naming it. The single env is a batch of one
and the vector env a batch of `num_envs`: both advance through `CueEpisodeBatch`, so they cannot
drift apart (as `rules.EpisodeBatch` does for the gridworlds).

Observation: `{"cues": Box(0, 1, (k,), float32)}`, flags that are 1.0 only at the step of a cue;
nothing is visible between cues, so the phase of a trial is never in the current frame.
Actions: `Discrete(n)`, action 0 waits, any other presses (or answers).

Time convention (every cue task):
- t counts the actions taken in the episode; reset returns observation 0, the s-th step returns
  observation s. A cue "at time s" is in observation s.
- A press "at time p" is the action chosen while looking at observation p: the (p+1)-th action,
  the step that takes t from p to p+1 (so `info["t"]` on that step is p + 1).
- A press is due at `due_time(T)`: the policy presses on the observation whose index is the due
  time. Every cue of a trial comes at or before the due time, so a press exactly on time is possible
  at every T >= 1 and the ceiling is 1.0.
- No press by the due time + `slack` (a wait chosen on that observation) ends the episode:
  reward -1, outcome "timeout", `terminated` (part of the task, never `truncated`).

Rewards of a press `lateness` steps off its due time (lateness 0: on time): "graded" (default)
`max(-1, 1 - |lateness| / 2)`, as TimeTrack's arrival; "exact" +1 on time, -1 otherwise. A task
with several presses pays each one this reward divided by the number of presses.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nalu_rl.envs.arguments import (
    action_argument,
    actions_argument,
    choice_argument,
    delay_argument,
    delay_range_argument,
    integer_at_least,
)
from nalu_rl.envs.draws import episode_keys
from nalu_rl.envs.episode_starts import SingleEpisodeStart, VectorEpisodeStart
from nalu_rl.envs.rules import (
    EARLY,
    LATE,
    NO_OUTCOME,
    OUTCOMES,
    REWARD_MODES,
    SUCCESS,
    TIMEOUT,
)
from nalu_rl.envs.task import ConfiguredDelays

CUE_OUTCOMES = (*OUTCOMES, "wrong")
"""The ways a cue-task episode ends: the gridworlds' four and "wrong" (a choice task's wrong answer)."""
WRONG = len(OUTCOMES)
# Indexed by an outcome code; code NO_OUTCOME (-1) picks the trailing "" (episode still running).
CUE_OUTCOME_NAMES = np.array([*CUE_OUTCOMES, ""])
WAIT = 0  # action 0 of every cue task: do nothing this step
CUE_TASK_OPTIONS = ("delay_range", "reward_mode")
"""The run options (of `task.TASK_OPTIONS`) every cue task takes; none has a grid or a pixel view."""
CUE_RENDER_MODES = ("ansi",)
RENDER_FPS = 4


@dataclass(frozen=True)
class CueTaskConfig:
    """The validated keyword arguments shared by the cue tasks (single and vector envs alike).

    delay_range: (low, high), T drawn uniformly from low..high. max_delay: the largest T a reset may
    ask for. slack: steps after a press's due time before the episode times out. reward_mode: one of
    REWARD_MODES. render_mode: "ansi" (a line of text) or None. Invalid values raise ValueError naming
    the argument; unknown names raise TypeError. A task's config adds its own fields, its cues and
    its due times (and may replace `judge`).
    """

    delay_range: tuple[int, int] = (5, 12)
    max_delay: int = 1000
    slack: int = 8
    reward_mode: str = "graded"
    render_mode: str | None = None

    cue_names: ClassVar[tuple[str, ...]]  # what each cue channel flags, in order
    num_actions: ClassVar[int] = 2  # action 0 waits; the others press (or answer)

    def __post_init__(self) -> None:
        max_delay = integer_at_least("max_delay", self.max_delay, 1)
        delay_range = delay_range_argument(self.delay_range, max_delay)
        slack = integer_at_least("slack", self.slack, 0)
        choice_argument("reward_mode", self.reward_mode, REWARD_MODES)
        choice_argument("render_mode", self.render_mode, (None, *CUE_RENDER_MODES))
        for name, value in (("delay_range", delay_range), ("max_delay", max_delay), ("slack", slack)):
            object.__setattr__(self, name, value)

    def checked_delay(self, delay: object) -> int:
        """`delay` as an int in 1..max_delay, else a ValueError naming it."""
        return delay_argument(delay, self.max_delay)

    @property
    def num_presses(self) -> int:
        """How many on-time presses make a success (one unless the task says more)."""
        return 1

    def due_time(self, delay: Any) -> Any:
        """The time of the last press due at delay T (ints or int arrays)."""
        raise NotImplementedError

    def press_due(self, delay: np.ndarray, presses: np.ndarray) -> np.ndarray:
        """The due time of the next press, per env, after `presses` on-time presses (one press: the
        due time)."""
        return self.due_time(delay)

    def cues(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The cue flags of observation t, shape (n, len(cue_names)), as booleans."""
        raise NotImplementedError

    def press_reward(self, lateness: np.ndarray) -> np.ndarray:
        """The reward of one press `lateness` steps off its due time, before dividing by num_presses."""
        if self.reward_mode == "graded":
            return np.maximum(1.0 - 0.5 * np.abs(lateness), -1.0)
        return np.where(lateness == 0, 1.0, -1.0)

    def judge(
        self, delay: np.ndarray, t: np.ndarray, key: np.ndarray, presses: np.ndarray, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The actions chosen on observation t, per env: (reward, ended, outcome code, presses).

        The default rule: presses due one after another at `press_due`; an on-time press pays
        `press_reward(0) / num_presses` and counts; the last one on time is a success. A press off
        time ends the episode ("early" or "late") with `press_reward(lateness) / num_presses`.
        """
        lateness = t - self.press_due(delay, presses)
        pressed = actions != WAIT
        on_time = pressed & (lateness == 0)
        presses = presses + on_time
        finished = on_time & (presses == self.num_presses)
        off_time = pressed & ~on_time
        timed_out = ~pressed & (lateness >= self.slack)
        press_reward = self.press_reward(lateness) / self.num_presses
        reward = np.where(pressed, press_reward, np.where(timed_out, -1.0, 0.0))
        outcome = np.select(
            [finished, off_time & (lateness < 0), off_time, timed_out],
            [SUCCESS, EARLY, LATE, TIMEOUT],
            NO_OUTCOME,
        )
        return reward, finished | off_time | timed_out, outcome, presses


class CueEpisodeBatch:
    """The state of `num_envs` cue-task episodes, started and advanced by the config's rules.

    `delay` (T), `t` (actions taken) and `presses` (on-time presses so far) are int64 arrays of shape
    (num_envs,); `key` (uint64) is each episode's random key, from which a task derives what it
    draws per episode or per step (the order of two intervals, the distractors).
    """

    def __init__(self, config: CueTaskConfig, num_envs: int) -> None:
        self.config = config
        self.num_envs = num_envs
        self.delay = np.full(num_envs, config.delay_range[0], dtype=np.int64)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.presses = np.zeros(num_envs, dtype=np.int64)
        self.key = np.zeros(num_envs, dtype=np.uint64)

    def start(self, envs: np.ndarray | slice, uniforms: np.ndarray, delay: int | None = None) -> None:
        """Begin new episodes in `envs` from one row of `rules.draw_uniforms` output each (T, key);
        `delay` fixes T."""
        low, high = self.config.delay_range
        count = high - low + 1
        drawn = low + np.minimum((uniforms[:, 0] * count).astype(np.int64), count - 1)
        self.delay[envs] = drawn if delay is None else delay
        self.key[envs] = episode_keys(uniforms[:, 1])
        self.t[envs] = 0
        self.presses[envs] = 0

    def advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply the actions chosen on the current observations; return (reward float32, terminated
        bool, outcome code int8). The outcome code indexes CUE_OUTCOMES, NO_OUTCOME while running."""
        reward, ended, outcome, self.presses = self.config.judge(
            self.delay, self.t, self.key, self.presses, actions
        )
        self.t = self.t + 1
        return reward.astype(np.float32), ended, outcome.astype(np.int8)

    def observation(self) -> dict[str, np.ndarray]:
        """The current observations, a new array with a leading env axis under "cues"."""
        return {"cues": self.config.cues(self.delay, self.t, self.key).astype(np.float32)}


class CueTaskAttributes(ConfiguredDelays):
    """The timing-task interface's attributes (see `nalu_rl.envs.task`), read from `self.config`."""

    config: CueTaskConfig

    def due_time(self, delay: int) -> int:
        """The time of the (last) press due at delay T."""
        return int(self.config.due_time(self.config.checked_delay(delay)))

    def success_ceiling_exact(self, delay: int) -> Fraction:
        """The best possible success rate at delay T, exactly: 1 (every cue comes by the due time)."""
        self.config.checked_delay(delay)
        return Fraction(1)

    def success_ceiling(self, delay: int) -> float:
        """The best possible success rate at delay T: 1.0 at every T."""
        return float(self.success_ceiling_exact(delay))


def observation_space(config: CueTaskConfig) -> spaces.Dict:
    """The observation space of one env of this cue task."""
    return spaces.Dict({"cues": spaces.Box(0.0, 1.0, (len(config.cue_names),), np.float32)})


def cue_metadata(task_options: tuple[str, ...], delay_meaning: str) -> dict[str, Any]:
    """The metadata of a cue task's single env."""
    return {
        "render_modes": list(CUE_RENDER_MODES),
        "render_fps": RENDER_FPS,
        "task_options": task_options,
        "delay_meaning": delay_meaning,
    }


def vector_metadata(single_env: type) -> dict[str, Any]:
    """The metadata of a cue task's vector env: its single env's, with NEXT_STEP autoreset."""
    return {**single_env.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}


def text_frame(config: CueTaskConfig, batch: CueEpisodeBatch, env: int, outcome: str) -> str:
    """One line for the "ansi" render mode: t, T, the cues lit now and the outcome, if any."""
    lit = [name for name, on in zip(config.cue_names, batch.observation()["cues"][env], strict=True) if on]
    line = f"t={batch.t[env]} T={batch.delay[env]} cues: {', '.join(lit) or '-'}"
    return f"{line} [{outcome}]" if outcome else line


class CueTaskEnv(CueTaskAttributes, SingleEpisodeStart, gym.Env):
    """The single env of a cue task; a subclass names its `config_class` and its metadata.

    See the module docstring for the observation, the time convention and the rewards. `info` holds
    `delay` (T) and `t` always and, on the last step, `outcome` (one of CUE_OUTCOMES) and `success`
    (outcome == "success"). `reset(options={"delay": T})` fixes T for that episode.
    """

    metadata: ClassVar[dict[str, Any]] = cue_metadata(CUE_TASK_OPTIONS, "")
    config_class: ClassVar[type[CueTaskConfig]]

    def __init__(self, **options: Any) -> None:
        self.config = self.config_class(**options)
        self.render_mode = self.config.render_mode
        self.observation_space = observation_space(self.config)
        self.action_space = spaces.Discrete(self.config.num_actions)
        self._batch = CueEpisodeBatch(self.config, 1)
        self._init_episode_start()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: T from `delay_range` or `options["delay"]`, and a new random key."""
        super().reset(seed=seed)
        self._start_episode(options)
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Take one action (0 waits); see the module docstring for the rules."""
        if self._needs_reset:
            raise RuntimeError("the episode has ended (or never started): call reset() first")
        action_index = action_argument(action, self.config.num_actions)
        reward, terminated, outcome = self._batch.advance(np.array([action_index]))
        ended = bool(terminated[0])
        info = self._info()
        if ended:
            self._outcome = str(CUE_OUTCOME_NAMES[outcome[0]])
            info["outcome"] = self._outcome
            info["success"] = self._outcome == "success"
            self._needs_reset = True
        return self._observation(), float(reward[0]), ended, False, info

    def _observation(self) -> dict[str, np.ndarray]:
        return {key: value[0] for key, value in self._batch.observation().items()}

    def _info(self) -> dict[str, Any]:
        return {"delay": int(self._batch.delay[0]), "t": int(self._batch.t[0])}

    def render(self) -> str | None:
        """A line of text ("ansi" mode) describing the current step; None without a render mode."""
        if self.render_mode is None:
            return None
        return text_frame(self.config, self._batch, 0, self._outcome)


class CueTaskVectorEnv(CueTaskAttributes, VectorEpisodeStart, VectorEnv):
    """`num_envs` independent envs of one cue task advanced as one batch, with numpy, no loop over envs.

    A subclass names the task's `config_class` and `metadata`. Env i of a vector env reset with
    `seed` plays exactly like the task's single env reset with `seed + i` and fed the same actions.
    Autoreset is NEXT_STEP: the step after an env's episode ends starts a new episode there, ignores
    that env's action and returns its first observation with reward 0. Infos are arrays over envs:
    `delay` and `t` always, `outcome` (str, "" where no episode ended) and `success` (bool), each with
    its `_key` mask (`_outcome` and `_success` true where an episode ended). Rewards are float32.
    """

    config_class: ClassVar[type[CueTaskConfig]]

    def __init__(self, num_envs: int, **options: Any) -> None:
        num_envs = integer_at_least("num_envs", num_envs, 1)
        self.config = self.config_class(**options)
        self.num_envs = num_envs
        self.render_mode = self.config.render_mode
        self.single_observation_space = observation_space(self.config)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(self.config.num_actions)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, self.config.num_actions))
        self._batch = CueEpisodeBatch(self.config, num_envs)
        self._init_episode_start(num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode in every env; env i is seeded `seed + i`; `options["delay"]` fixes T for all."""
        super().reset(seed=seed)
        self._start_every_episode(seed, options)
        return self._batch.observation(), self._infos(self._outcome_code)

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every env by one action (an int array of shape (num_envs,)); see the class docstring."""
        if self._uniforms is None:
            raise RuntimeError("the vector env has not been reset: call reset() first")
        actions = actions_argument(actions, self.num_envs, self.config.num_actions)
        reward, terminated, outcome = self._advance_every_env(actions)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._batch.observation(), reward, terminated.copy(), truncated, self._infos(outcome)

    def _infos(self, outcome: np.ndarray) -> dict[str, Any]:
        ended = outcome != NO_OUTCOME
        return {
            "delay": self._batch.delay.copy(),
            "_delay": self._all_true.copy(),
            "t": self._batch.t.copy(),
            "_t": self._all_true.copy(),
            "outcome": CUE_OUTCOME_NAMES[outcome],
            "_outcome": ended,
            "success": outcome == SUCCESS,
            "_success": ended.copy(),
        }

    def render(self) -> str | None:
        """A line of text ("ansi" mode) describing env 0's current step."""
        if self.render_mode is None:
            return None
        return text_frame(self.config, self._batch, 0, str(CUE_OUTCOME_NAMES[self._outcome_code[0]]))
