"""IntervalDiscrimination: two intervals, T and T + d in random order; answer which was longer.

Two-interval forced choice on empty intervals, as in Karmarkar & Buonomano (2007), "Timing in the
absence of clocks: encoding time in neural network states", Neuron 53(3), 427-438; as a cue task
(see `nalu_rl.envs.cue_task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from nalu_rl.envs.cue_task import (
    CUE_TASK_OPTIONS,
    WAIT,
    WRONG,
    CueTaskConfig,
    CueTaskEnv,
    CueTaskVectorEnv,
    cue_metadata,
    vector_metadata,
)
from nalu_rl.envs.draws import KEY_BITS
from nalu_rl.envs.rules import EARLY, NO_OUTCOME, SUCCESS, TIMEOUT

WEBER_FRACTION = 4
"""The longer interval exceeds the shorter by d = max(1, T // WEBER_FRACTION): a Weber fraction of 1/4."""
FIRST_LONGER, SECOND_LONGER = 1, 2
"""The two answers (action 0 waits)."""


def difference(delay: Any) -> Any:
    """d = max(1, T // 4): how much longer the longer interval is (ints or int arrays)."""
    return np.maximum(1, delay // WEBER_FRACTION)


def first_is_longer(key: np.ndarray) -> np.ndarray:
    """Whether the first interval is the longer one, per episode: the top bit of its key (even odds)."""
    return (key >> np.uint64(KEY_BITS - 1)) == 1


@dataclass(frozen=True)
class IntervalDiscriminationConfig(CueTaskConfig):
    """The keyword arguments of IntervalDiscrimination: exactly those of `CueTaskConfig`.

    One cue channel flashes at 0, A and A + B, {A, B} = {T, T + d}; answers are due from the third
    flash, at 2T + d, until 2T + d + slack. The reward is +1 for the right answer, -1 otherwise, in
    both reward modes (a choice has no lateness to grade).
    """

    cue_names: ClassVar[tuple[str, ...]] = ("flash",)
    num_actions: ClassVar[int] = 3

    def due_time(self, delay: Any) -> Any:
        """The third flash, A + B = 2T + d: the first time an answer may come."""
        return 2 * delay + difference(delay)

    def cues(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The flash in observations 0, A and A + B."""
        first = delay + difference(delay) * first_is_longer(key)
        return ((t == 0) | (t == first) | (t == self.due_time(delay)))[:, None]

    def judge(
        self, delay: np.ndarray, t: np.ndarray, key: np.ndarray, presses: np.ndarray, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """An answer before the third flash is "early"; from it on, the right one is a success and the
        other "wrong"; no answer by due + slack times out. +1 for a success, -1 for any other end."""
        wait_left = t - self.due_time(delay)
        answered = actions != WAIT
        early = answered & (wait_left < 0)
        right_answer = np.where(first_is_longer(key), FIRST_LONGER, SECOND_LONGER)
        right = answered & ~early & (actions == right_answer)
        wrong = answered & ~early & ~right
        timed_out = ~answered & (wait_left >= self.slack)
        ended = answered | timed_out
        reward = np.where(right, 1.0, np.where(ended, -1.0, 0.0))
        outcome = np.select([right, early, wrong, timed_out], [SUCCESS, EARLY, WRONG, TIMEOUT], NO_OUTCOME)
        return reward, ended, outcome, presses + right


class IntervalDiscriminationEnv(CueTaskEnv):
    """Two-interval forced choice: was the first interval (0 to A) or the second (A to A + B) longer?

    Paradigm: Karmarkar & Buonomano 2007, "Timing in the absence of clocks: encoding time in neural
    network states", Neuron (discrimination of empty intervals bounded by brief tones). One cue
    channel flashes in observations 0, A and A + B, where {A, B} = {T, T + d} in random order per
    episode and d = max(1, T // 4) (a Weber fraction of 1/4). Actions `Discrete(3)`: 0 wait,
    1 "the first was longer", 2 "the second was longer". Time convention of `nalu_rl.envs.cue_task`:
    an answer chosen on observation p is at time p. Answering before the third flash (p < 2T + d) is
    "early"; from p = 2T + d to 2T + d + slack the right answer is a success (+1), the other "wrong"
    (-1); no answer by then: -1, "timeout". The agent must compare two durations, and T itself is
    never shown. Ceiling 1.0 at every T. The keyword arguments are the fields of
    `IntervalDiscriminationConfig` (those of every cue task; reward_mode changes nothing here).
    """

    metadata = cue_metadata(CUE_TASK_OPTIONS, "the shorter of the two intervals to compare")
    config_class = IntervalDiscriminationConfig


class IntervalDiscriminationVectorEnv(CueTaskVectorEnv):
    """`num_envs` IntervalDiscrimination envs (see `IntervalDiscriminationEnv`) advanced as one batch."""

    metadata = vector_metadata(IntervalDiscriminationEnv)
    config_class = IntervalDiscriminationConfig
