"""ScaledReproduction: two flashes mark an interval T; press `gain` x T steps after the second.

The "1-2-Go" gain task of Remington, Narain, Hosseini & Jazayeri (2018), "Flexible sensorimotor
computations through rapid reconfiguration of cortical dynamics", Neuron 98(5), 1005-1019, as a cue
task (see `nalu_rl.envs.cue_task`): the interval is measured at one rate and produced at another.
"""

from __future__ import annotations

from dataclasses import dataclass

from nalu_rl.envs.arguments import integer_at_least
from nalu_rl.envs.cue_task import (
    CUE_TASK_OPTIONS,
    CueTaskEnv,
    CueTaskVectorEnv,
    cue_metadata,
    vector_metadata,
)
from nalu_rl.envs.ready_set_go import ReadySetGoConfig


@dataclass(frozen=True)
class ScaledReproductionConfig(ReadySetGoConfig):
    """The keyword arguments of ScaledReproduction: those of `CueTaskConfig` and `gain` (int >= 1,
    default 2): the press is due gain x T after "set", at (1 + gain) T."""

    gain: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "gain", integer_at_least("gain", self.gain, 1))

    @property
    def production_factor(self) -> int:
        """The press is due `gain` intervals after "set"."""
        return self.gain


class ScaledReproductionEnv(CueTaskEnv):
    """Scaled interval reproduction: see "ready" (time 0) and "set" (time T), press at (1 + gain) T.

    Paradigm: Remington, Narain, Hosseini & Jazayeri 2018, "Flexible sensorimotor computations
    through rapid reconfiguration of cortical dynamics", Neuron (the 1-2-Go task: produce once or
    twice the measured interval). A counter must count T up between the cues and then gain x T after
    "set": two different rates. Observation `{"cues": [ready, set]}`; actions `Discrete(2)`: 0 wait,
    1 press; the press is chosen on observation (1 + gain) T (time convention of
    `nalu_rl.envs.cue_task`). Early, late, timeout and rewards as `ReadySetGoEnv`. Ceiling 1.0 at
    every T. The keyword arguments are the fields of `ScaledReproductionConfig` (those of ReadySetGo
    and `gain`, default 2).
    """

    metadata = cue_metadata(CUE_TASK_OPTIONS, "the interval between ready and set, to produce gain times")
    config_class = ScaledReproductionConfig


class ScaledReproductionVectorEnv(CueTaskVectorEnv):
    """`num_envs` ScaledReproduction envs (see `ScaledReproductionEnv`) advanced as one batch."""

    metadata = vector_metadata(ScaledReproductionEnv)
    config_class = ScaledReproductionConfig
