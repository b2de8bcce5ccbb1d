"""DistractorReproduction: reproduce the interval between two timing cues among distractor flashes.

Interval timing with distracters, after Buhusi & Meck (2006), "Interval timing with gaps and
distracters: evaluation of the ambiguity, switch, and time-sharing hypotheses", Journal of
Experimental Psychology: Animal Behavior Processes 32(3), 329-338; here the distractors are flashes
of another kind that must not be counted. A cue task (see `nalu_rl.envs.cue_task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from nalu_rl.envs.arguments import probability_argument
from nalu_rl.envs.cue_task import (
    CUE_TASK_OPTIONS,
    CueTaskEnv,
    CueTaskVectorEnv,
    cue_metadata,
    vector_metadata,
)
from nalu_rl.envs.draws import step_uniforms
from nalu_rl.envs.ready_set_go import ReadySetGoConfig


@dataclass(frozen=True)
class DistractorReproductionConfig(ReadySetGoConfig):
    """The keyword arguments of DistractorReproduction: those of `CueTaskConfig` and
    `distractor_rate` (a probability, default 0.1): the chance of a distractor at each step other
    than the two timing cues'. The press is due at 2T, as in ReadySetGo."""

    distractor_rate: float = 0.1

    cue_names: ClassVar[tuple[str, ...]] = ("flash", "distractor")

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(
            self, "distractor_rate", probability_argument("distractor_rate", self.distractor_rate)
        )

    def distractors(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """Whether observation t shows a distractor: a fixed function of the episode's key and t (so
        single and vector envs agree), never at the timing cues (t = 0 and t = T)."""
        timing_cue = (t == 0) | (t == delay)
        return (step_uniforms(key, t) < self.distractor_rate) & ~timing_cue

    def cues(self, delay: np.ndarray, t: np.ndarray, key: np.ndarray) -> np.ndarray:
        """[flash, kind]: [1, 0] for the timing cues at 0 and T, [1, 1] for a distractor."""
        distractor = self.distractors(delay, t, key)
        return np.stack([(t == 0) | (t == delay) | distractor, distractor], axis=1)


class DistractorReproductionEnv(CueTaskEnv):
    """Interval reproduction among distractors: timing cues at 0 and T, press at 2T; ignore the rest.

    Paradigm: Buhusi & Meck 2006, "Interval timing with gaps and distracters: evaluation of the
    ambiguity, switch, and time-sharing hypotheses", J. Exp. Psych.: Animal Behavior Processes.
    Observation `{"cues": [flash, kind]}`: the two timing cues (observations 0 and T) show [1, 0];
    a distractor shows [1, 1], at each other step with probability `distractor_rate` (default 0.1),
    the whole episode long, answer phase included. A counter of flashes is wrong: only the flashes of
    kind 0 mark the interval. Actions `Discrete(2)`: 0 wait, 1 press; the press is due on observation
    2T; early, late, timeout and rewards as `ReadySetGoEnv`. The distractors come from the episode's
    random key through a counter-based hash of (key, t) (`nalu_rl.envs.draws.step_uniforms`), so a
    vector env draws them for all envs at once, identically to single envs. Ceiling 1.0 at every T.
    The keyword arguments are the fields of `DistractorReproductionConfig`.
    """

    metadata = cue_metadata(CUE_TASK_OPTIONS, "the interval between the two timing cues, to produce after")
    config_class = DistractorReproductionConfig


class DistractorReproductionVectorEnv(CueTaskVectorEnv):
    """`num_envs` DistractorReproduction envs (see `DistractorReproductionEnv`) advanced as one batch."""

    metadata = vector_metadata(DistractorReproductionEnv)
    config_class = DistractorReproductionConfig
