"""ContinuationTapping: three isochronous beats T apart, then keep tapping at the beat without them.

Synchronization-continuation tapping, whose timing Wing & Kristofferson (1973) modelled in "Response
delays and the timing of discrete motor responses", Perception & Psychophysics 14(1), 5-12; as a cue
task (see `nalu_rl.envs.cue_task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from nalu_rl.envs.arguments import integer_at_least
from nalu_rl.envs.cue_task import (
    CUE_TASK_OPTIONS,
    CueTaskConfig,
    CueTaskEnv,
    CueTaskVectorEnv,
    cue_metadata,
    vector_metadata,
)

BEATS = 3
"""Beats shown before the continuation taps: at 0, T and 2T."""


@dataclass(frozen=True)
class ContinuationTappingConfig(CueTaskConfig):
    """The keyword arguments of ContinuationTapping: those of `CueTaskConfig` and `taps` (int >= 1,
    default 2): the continuation taps due at 3T, 4T, ...; the last is due at (2 + taps) T."""

    taps: int = 2

    cue_names: ClassVar[tuple[str, ...]] = ("beat",)
    num_actions: ClassVar[int] = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "taps", integer_at_least("taps", self.taps, 1))

    @property
    def num_presses(self) -> int:
        """Every tap must be on time."""
        return self.taps

    def due_time(self, delay: Any) -> Any:
        """The last tap, at (BEATS - 1 + taps) T."""
        return (BEATS - 1 + self.taps) * delay

    def press_due(self, delay: np.ndarray, presses: np.ndarray) -> np.ndarray:
        """Tap k (k = 0, 1, ...) is due at (BEATS + k) T: where the next beat would be."""
        return (BEATS + presses) * delay

    def cues(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The beat in observations 0, T and 2T."""
        return ((t % delay == 0) & (t < BEATS * delay))[:, None]


class ContinuationTappingEnv(CueTaskEnv):
    """Continuation tapping: beats at 0, T, 2T; tap at 3T, 4T, ... (`taps` taps) with no beat shown.

    Paradigm: synchronization-continuation tapping, Wing & Kristofferson 1973, "Response delays and
    the timing of discrete motor responses", Perception & Psychophysics. Observation
    `{"cues": [beat]}`: 1.0 in observations 0, T and 2T only. Actions `Discrete(2)`: 0 wait, 1 tap.
    Time convention of `nalu_rl.envs.cue_task`: tap k (k = 0 .. taps-1) is due on observation
    (3 + k) T, where the next beat would have come; the last is due at (2 + taps) T. An on-time tap
    pays 1 / taps and the episode goes on; a tap off time ends it, outcome "early" or "late", reward
    `max(-1, 1 - |lateness| / 2) / taps` (graded) or -1 / taps (exact), lateness from the tap then
    due. No tap by its due time + slack: -1, "timeout". Success: every tap on time (return 1). The
    rhythm must be kept across taps: the count restarts at each tap. Ceiling 1.0 at every T. The
    keyword arguments are the fields of `ContinuationTappingConfig` (those of every cue task, `taps`).
    """

    metadata = cue_metadata(CUE_TASK_OPTIONS, "the beat's period, to keep tapping at")
    config_class = ContinuationTappingConfig


class ContinuationTappingVectorEnv(CueTaskVectorEnv):
    """`num_envs` ContinuationTapping envs (see `ContinuationTappingEnv`) advanced as one batch."""

    metadata = vector_metadata(ContinuationTappingEnv)
    config_class = ContinuationTappingConfig
