"""ReadySetGo: two flashes mark an interval T; press once T steps after the second (interval reproduction).

The ready-set-go task of Jazayeri & Shadlen (2010), "Temporal context calibrates interval timing",
Nature Neuroscience 13(8), 1020-1026, as a cue task (see `nalu_rl.envs.cue_task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from nalu_rl.envs.cue_task import (
    CUE_TASK_OPTIONS,
    CueTaskConfig,
    CueTaskEnv,
    CueTaskVectorEnv,
    cue_metadata,
    vector_metadata,
)


@dataclass(frozen=True)
class ReadySetGoConfig(CueTaskConfig):
    """The keyword arguments of ReadySetGo: exactly those of `CueTaskConfig`.

    "ready" flashes at time 0, "set" at time T; the press is due at 2T.
    """

    cue_names: ClassVar[tuple[str, ...]] = ("ready", "set")
    num_actions: ClassVar[int] = 2

    @property
    def production_factor(self) -> int:
        """The press is due this many intervals T after "set" (1: reproduce T)."""
        return 1

    def due_time(self, delay: Any) -> Any:
        """Due (1 + production_factor) * T: "set" at T, then the interval produced."""
        return (1 + self.production_factor) * delay

    def cues(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """ "ready" in observation 0, "set" in observation T."""
        return np.stack([t == 0, t == delay], axis=1)


class ReadySetGoEnv(CueTaskEnv):
    """Interval reproduction: see "ready" (time 0) and "set" (time T), then press at time 2T.

    Paradigm: Jazayeri & Shadlen 2010, "Temporal context calibrates interval timing", Nature
    Neuroscience. Observation `{"cues": [ready, set]}`, each 1.0 only in its own observation
    (0 and T). Actions `Discrete(2)`: 0 wait, 1 press. Time convention (`nalu_rl.envs.cue_task`): a
    press at time p is the action chosen on observation p, so the on-time press is the one chosen on
    observation 2T, T observations after "set" as "set" was T after "ready". A press before 2T is
    "early" ("set" not yet seen included), after it "late"; reward `max(-1, 1 - |p - 2T| / 2)`
    (graded) or +-1 (exact). No press by 2T + slack: reward -1, "timeout", `terminated`. `info`:
    `delay`, `t`; `outcome` and `success` on the last step. Ceiling 1.0 at every T. The keyword
    arguments are the fields of `ReadySetGoConfig` (delay_range, max_delay, slack=8, reward_mode,
    render_mode).
    """

    metadata = cue_metadata(CUE_TASK_OPTIONS, "the interval between ready and set, to produce after set")
    config_class = ReadySetGoConfig


class ReadySetGoVectorEnv(CueTaskVectorEnv):
    """`num_envs` ReadySetGo envs (see `ReadySetGoEnv`) advanced as one batch (see `CueTaskVectorEnv`)."""

    metadata = vector_metadata(ReadySetGoEnv)
    config_class = ReadySetGoConfig
