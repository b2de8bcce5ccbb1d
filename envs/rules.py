"""The rules of the timing gridworlds (TimeTrack, IntervalTiming), written once for a batch of episodes.

The single env is a batch of one and the vector env a batch of `num_envs`: both advance through
`EpisodeBatch`, so they cannot drift apart. The two tasks share the grid, the actions, the rewards
and the timeout; they differ only in their `TimingRule`: when the arrival is due and what the
stimulus shows. Positions are flat cell indices `row * size + col`; moves, walls included, are one
lookup in a precomputed table (`RuleTables`).

The rules themselves are pure functions of the array namespace they are given (`start_episodes`,
`advance_episodes`, `TimingRule.stimulus_value`), as gymnax and Brax write an env's `reset` and
`step`: numpy here, torch in the runtime's tensor envs (`nalu_rl.runtime.device_env`), which run
these same lines on the learner's device. This package itself imports numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from nalu_rl.envs.arguments import (
    choice_argument,
    delay_argument,
    delay_range_argument,
    integer_argument,
    integer_at_least,
)

OUTCOMES = ("success", "early", "late", "timeout")
"""The ways an episode ends; `info["outcome"]` holds one of them on the last step."""

NO_OUTCOME = -1
SUCCESS, EARLY, LATE, TIMEOUT = range(4)
# Indexed by an outcome code; code NO_OUTCOME (-1) picks the trailing "" (episode still running).
OUTCOME_NAMES = np.array([*OUTCOMES, ""])

ACTIONS = ("UP", "DOWN", "LEFT", "RIGHT", "PASS")
NUM_ACTIONS = len(ACTIONS)
_ROW_STEP = np.array([-1, 1, 0, 0, 0])
_COL_STEP = np.array([0, 0, -1, 1, 0])

OBS_MODES = ("pixels", "symbolic")
STIMULUS_MODES = ("onset", "always")
"""TimeTrack's stimulus: the value T at onset only, or in every observation."""
LIGHT = "light"
"""IntervalTiming's stimulus: 1.0 while the light is on (the first T observations), then 0.0."""
REWARD_MODES = ("graded", "exact")
RENDER_MODES = ("rgb_array", "human")

EPISODES_PER_DRAW = 256
"""Episodes whose random placement and delay are drawn from the generator in one call."""
UNIFORMS_PER_EPISODE = 2  # one for the (agent, target) pair, one for the delay


def cast(xp: Any, array: Any, dtype_name: str) -> Any:
    """`array` as the dtype `xp.<dtype_name>` of its namespace (numpy's `astype`, torch's `to`)."""
    dtype = getattr(xp, dtype_name)
    return array.astype(dtype) if hasattr(array, "astype") else array.to(dtype)


@dataclass(frozen=True)
class TimingRule:
    """What sets one timing task apart: when the arrival is due, and what the stimulus shows.

    due_factor: the arrival is due at t = due_factor * T (TimeTrack 1, IntervalTiming 2).
    stimulus: "onset" (T in the first observation, then 0), "always" (T in every observation) or
    "light" (1.0 in the first T observations, then 0.0).
    """

    due_factor: int
    stimulus: str

    def due_time(self, delay: Any) -> Any:
        """The time t at which arriving is a success, per env."""
        return self.due_factor * delay

    def stimulus_value(self, delay: Any, t: Any, xp: Any = np) -> Any:
        """The stimulus observed at time t of an episode with delay T, per env, float32 (arrays of
        the namespace `xp`)."""
        if self.stimulus == "always":
            value = delay
        elif self.stimulus == "onset":
            value = xp.where(t == 0, delay, 0)
        else:
            value = t < delay
        return cast(xp, value, "float32")

    def stimulus_high(self, max_delay: int) -> float:
        """The upper bound of the stimulus space."""
        return 1.0 if self.stimulus == LIGHT else float(max_delay)

    def stimulus_label(self, value: float) -> str:
        """A few words for a frame saying what the stimulus shows, e.g. "stimulus 7" or "light on"."""
        if self.stimulus == LIGHT:
            return "light on" if value else "light off"
        return f"stimulus {value:g}"


@dataclass(frozen=True)
class GridTaskConfig:
    """The validated keyword arguments shared by the timing gridworlds (single and vector envs alike).

    size: the grid's side in cells. delay_range: (low, high), T drawn uniformly from low..high.
    max_delay: the largest T a reset may ask for. slack: steps after the due time before an episode
    times out (None: 2 * (size - 1); validated into `timeout_slack`). obs_mode, reward_mode,
    render_mode: one of OBS_MODES, REWARD_MODES, RENDER_MODES (or None). cell_px: pixels per cell in
    "pixels" observations. Invalid values raise ValueError naming the argument; unknown names raise
    TypeError. A task's config adds its own fields and its `rule`.
    """

    size: int = 5
    delay_range: tuple[int, int] = (5, 12)
    max_delay: int = 1000
    slack: int | None = None
    obs_mode: str = "pixels"
    reward_mode: str = "graded"
    cell_px: int = 8
    render_mode: str | None = None
    timeout_slack: int = field(init=False)

    def __post_init__(self) -> None:
        size = integer_at_least("size", self.size, 2)
        max_delay = integer_at_least("max_delay", self.max_delay, 1)
        delay_range = delay_range_argument(self.delay_range, max_delay)
        slack = 2 * (size - 1) if self.slack is None else integer_at_least("slack", self.slack, 0)
        cell_px = integer_at_least("cell_px", self.cell_px, 1)
        choice_argument("obs_mode", self.obs_mode, OBS_MODES)
        choice_argument("reward_mode", self.reward_mode, REWARD_MODES)
        choice_argument("render_mode", self.render_mode, (None, *RENDER_MODES))
        for name, value in (
            ("size", size),
            ("delay_range", delay_range),
            ("max_delay", max_delay),
            ("cell_px", cell_px),
            ("timeout_slack", slack),
        ):
            object.__setattr__(self, name, value)

    @property
    def rule(self) -> TimingRule:
        """The task's due time and stimulus; each task's config says its own."""
        raise NotImplementedError

    def checked_delay(self, delay: object) -> int:
        """`delay` as an int in 1..max_delay, else a ValueError naming it."""
        return delay_argument(delay, self.max_delay)


@dataclass(frozen=True)
class TimeTrackConfig(GridTaskConfig):
    """The keyword arguments of TimeTrack: those of `GridTaskConfig` and `stimulus`, one of STIMULUS_MODES.

    Arrival is due at t = T; the stimulus shows the value T (at onset, or always).
    """

    stimulus: str = "onset"

    def __post_init__(self) -> None:
        super().__post_init__()
        choice_argument("stimulus", self.stimulus, STIMULUS_MODES)

    @property
    def rule(self) -> TimingRule:
        """Due at T; the stimulus is the value T."""
        return TimingRule(due_factor=1, stimulus=self.stimulus)


@dataclass(frozen=True)
class IntervalTimingConfig(GridTaskConfig):
    """The keyword arguments of IntervalTiming: exactly those of `GridTaskConfig`.

    A light is on for the first T steps; arrival is due T steps after it goes off, at t = 2T.
    """

    @property
    def rule(self) -> TimingRule:
        """Due at 2T; the stimulus is a light, on while t < T."""
        return TimingRule(due_factor=2, stimulus=LIGHT)


def draw_uniforms(rng: np.random.Generator) -> np.ndarray:
    """Uniforms in [0, 1) for the next EPISODES_PER_DRAW episodes of one env, shape (EPISODES_PER_DRAW, 2).

    Each env, single or inside a vector env, consumes its own generator only through this call, so
    env i of a vector env seeded `s` draws exactly what a single env seeded `s + i` draws.
    """
    return rng.random((EPISODES_PER_DRAW, UNIFORMS_PER_EPISODE))


class EnvUniformStreams:
    """The uniforms of `num_envs` envs, each from its own generator (env i seeded `seed + i`; fresh
    entropy with seed None), drawn EPISODES_PER_DRAW episodes at a time by `draw_uniforms`."""

    def __init__(self, num_envs: int, seed: int | None) -> None:
        self.rngs = [seeding.np_random(None if seed is None else seed + env)[0] for env in range(num_envs)]
        self.uniforms = np.zeros((num_envs, EPISODES_PER_DRAW, UNIFORMS_PER_EPISODE))
        self.used = np.full(num_envs, EPISODES_PER_DRAW, dtype=np.int64)

    def next(self, envs: np.ndarray) -> np.ndarray:
        """One row of uniforms per env in `envs` (an int array), shape (len(envs), 2)."""
        used = self.used[envs]
        # Each env refills once per EPISODES_PER_DRAW episodes; this loop is over those few envs only.
        for env in envs[used == EPISODES_PER_DRAW]:
            self.uniforms[env] = draw_uniforms(self.rngs[env])
            self.used[env] = 0
        used = self.used[envs]
        self.used[envs] = used + 1
        return self.uniforms[envs, used]


@dataclass(frozen=True)
class RuleTables:
    """The lookup tables of the rules, arrays of one namespace (numpy by default; the tensor envs
    hold them on their device).

    next_cell[cell, action]: the cell an action leads to (a move into the wall stays put).
    arrival_code[sign(t - due) + 1]: the outcome code of an arrival (early, success, late).
    cell_distance[a, b]: the Manhattan distance between two cells.
    """

    next_cell: Any
    arrival_code: Any
    cell_distance: Any

    @classmethod
    def for_grid(cls, size: int) -> RuleTables:
        """The numpy tables of a `size` x `size` grid."""
        rows, cols = np.divmod(np.arange(size * size), size)
        next_rows = np.clip(rows[:, None] + _ROW_STEP[None, :], 0, size - 1)
        next_cols = np.clip(cols[:, None] + _COL_STEP[None, :], 0, size - 1)
        return cls(
            next_cell=next_rows * size + next_cols,
            arrival_code=np.array([EARLY, SUCCESS, LATE], dtype=np.int8),
            cell_distance=np.abs(rows[:, None] - rows[None, :]) + np.abs(cols[:, None] - cols[None, :]),
        )


def _scaled_index(xp: Any, uniforms: Any, count: int) -> Any:
    """Map uniforms in [0, 1) to integers in 0..count-1, uniformly."""
    index = cast(xp, uniforms * count, "int64")
    return xp.where(index > count - 1, count - 1, index)


def start_episodes(xp: Any, config: GridTaskConfig, uniforms: Any) -> tuple[Any, Any, Any]:
    """(agent, target, delay) of new episodes, one per row of `uniforms` (shape (n, 2), rows as
    `draw_uniforms` gives them): agent and target uniform on two different cells, T uniform on
    `delay_range`."""
    num_cells = config.size * config.size
    pair = _scaled_index(xp, uniforms[:, 0], num_cells * (num_cells - 1))
    agent, offset = pair // (num_cells - 1), pair % (num_cells - 1)
    # The target is uniform over the other cells: skip the agent's cell.
    target = offset + cast(xp, offset >= agent, "int64")
    low, high = config.delay_range
    delay = low + _scaled_index(xp, uniforms[:, 1], high - low + 1)
    return agent, target, delay


def advance_episodes(
    xp: Any,
    config: GridTaskConfig,
    tables: RuleTables,
    agent: Any,
    target: Any,
    delay: Any,
    t: Any,
    actions: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """Apply one action per env: (agent, t, reward float32, terminated bool, outcome code int8).

    Arrays of the namespace `xp`, `tables` in it too. The outcome code indexes OUTCOMES and is
    NO_OUTCOME while the episode runs.
    """
    t = t + 1
    agent = tables.next_cell[agent, actions]
    arrived = agent == target
    lateness = t - config.rule.due_time(delay)
    # The timeout is part of the task (terminated, not truncated): no value bootstraps past it.
    timed_out = ~arrived & (lateness >= config.timeout_slack)
    if config.reward_mode == "graded":
        arrival_reward = xp.clip(1.0 - 0.5 * xp.abs(lateness), -1.0, None)
    else:
        arrival_reward = xp.where(lateness == 0, 1.0, -1.0)
    reward = xp.where(arrived, arrival_reward, xp.where(timed_out, -1.0, 0.0))
    outcome = xp.where(
        arrived,
        tables.arrival_code[xp.sign(lateness) + 1],
        xp.where(timed_out, TIMEOUT, NO_OUTCOME),
    )
    return agent, t, cast(xp, reward, "float32"), arrived | timed_out, cast(xp, outcome, "int8")


class EpisodeBatch:
    """The state of `num_envs` timing-task episodes (numpy), started and advanced by the rules above.

    Every attribute is an int64 array of shape (num_envs,): `agent`, `target` (flat cells),
    `delay` (T) and `t` (actions taken in the episode). The task's due time and stimulus follow
    `config.rule`.
    """

    def __init__(self, config: GridTaskConfig, num_envs: int) -> None:
        self.config = config
        self.rule = config.rule
        self.num_envs = num_envs
        size = config.size
        self.num_cells = size * size
        self.cell_row, self.cell_col = np.divmod(np.arange(self.num_cells), size)
        self.tables = RuleTables.for_grid(size)
        self.agent = np.zeros(num_envs, dtype=np.int64)
        self.target = np.ones(num_envs, dtype=np.int64)
        self.delay = np.full(num_envs, config.delay_range[0], dtype=np.int64)
        self.t = np.zeros(num_envs, dtype=np.int64)

    def start(self, envs: np.ndarray | slice, uniforms: np.ndarray, delay: int | None = None) -> None:
        """Begin new episodes in `envs` from one row of `draw_uniforms` output each; `delay` fixes T."""
        agent, target, drawn_delay = start_episodes(np, self.config, uniforms)
        self.agent[envs] = agent
        self.target[envs] = target
        self.delay[envs] = drawn_delay if delay is None else delay
        self.t[envs] = 0

    def advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per env; return (reward float32, terminated bool, outcome code int8).

        The outcome code indexes OUTCOMES and is NO_OUTCOME while the episode runs.
        """
        self.agent, self.t, reward, terminated, outcome = advance_episodes(
            np, self.config, self.tables, self.agent, self.target, self.delay, self.t, actions
        )
        return reward, terminated, outcome

    def distance(self) -> np.ndarray:
        """Manhattan distance between agent and target, per env."""
        return self.tables.cell_distance[self.agent, self.target]

    def stimulus(self) -> np.ndarray:
        """The stimulus each env observes now, shape (num_envs, 1) float32 (see `TimingRule`)."""
        return self.rule.stimulus_value(self.delay, self.t)[:, None]


def success_ceiling_exact(delay: int, size: int = 5) -> Fraction:
    """The best possible success rate when arrival is due at t = `delay`, as an exact fraction:
    P(Manhattan distance <= delay).

    TimeTrack's ceiling at T; IntervalTiming's at T is this at 2T. Agent and target are uniform on
    two different cells of a `size` x `size` grid; enumerated exactly (29/30 at 6 on the 5 x 5 grid).
    """
    delay = integer_argument("delay", delay)
    size = integer_argument("size", size)
    if size < 2:
        raise ValueError(f"size must be >= 2, got {size!r}")
    rows, cols = np.divmod(np.arange(size * size), size)
    distance = np.abs(rows[:, None] - rows[None, :]) + np.abs(cols[:, None] - cols[None, :])
    distinct = ~np.eye(size * size, dtype=bool)
    reachable = int(np.count_nonzero((distance <= delay) & distinct))
    return Fraction(reachable, int(np.count_nonzero(distinct)))


def success_ceiling(delay: int, size: int = 5) -> float:
    """The best possible success rate when arrival is due at t = `delay`: the exact one as a float."""
    return float(success_ceiling_exact(delay, size))
