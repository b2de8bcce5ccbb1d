"""The timing tasks as Gymnasium environments: the gridworlds TimeTrack (NALU paper, section 4.5) and
IntervalTiming, and the cue tasks of the interval-timing literature.

Importing this package registers, for `gymnasium.make` and `gymnasium.make_vec` (each with its
native vector env):
- `nalu_rl/TimeTrack-v0` (`TimeTrackEnv`, `TimeTrackVectorEnv`),
- `nalu_rl/IntervalTiming-v0` (`IntervalTimingEnv`, `IntervalTimingVectorEnv`),
- the cue tasks (`nalu_rl.envs.cue_task`) `nalu_rl/ReadySetGo-v0`, `nalu_rl/ScaledReproduction-v0`,
  `nalu_rl/IntervalDiscrimination-v0`, `nalu_rl/DistractorReproduction-v0` and
  `nalu_rl/ContinuationTapping-v0` (`<Name>Env`, `<Name>VectorEnv`; ids in CUE_TASK_IDS).
All follow the timing-task interface of `nalu_rl.envs.task` (`TimingTask`, `is_timing_task`).
"""

import gymnasium

from nalu_rl.envs.continuation_tapping import ContinuationTappingEnv, ContinuationTappingVectorEnv
from nalu_rl.envs.cue_task import CUE_OUTCOMES
from nalu_rl.envs.distractor_reproduction import DistractorReproductionEnv, DistractorReproductionVectorEnv
from nalu_rl.envs.interval_discrimination import IntervalDiscriminationEnv, IntervalDiscriminationVectorEnv
from nalu_rl.envs.interval_timing import IntervalTimingEnv
from nalu_rl.envs.ready_set_go import ReadySetGoEnv, ReadySetGoVectorEnv
from nalu_rl.envs.rules import OUTCOMES, success_ceiling
from nalu_rl.envs.scaled_reproduction import ScaledReproductionEnv, ScaledReproductionVectorEnv
from nalu_rl.envs.task import TASK_OPTIONS, TimingTask, is_timing_task
from nalu_rl.envs.time_track import TimeTrackEnv
from nalu_rl.envs.vector import IntervalTimingVectorEnv, TimeTrackVectorEnv

ENV_ID = "nalu_rl/TimeTrack-v0"
"""TimeTrack's Gymnasium id."""
INTERVAL_TIMING_ID = "nalu_rl/IntervalTiming-v0"
"""IntervalTiming's Gymnasium id."""

_ENTRY_POINTS = {
    ENV_ID: ("nalu_rl.envs.time_track:TimeTrackEnv", "nalu_rl.envs.vector:TimeTrackVectorEnv"),
    INTERVAL_TIMING_ID: (
        "nalu_rl.envs.interval_timing:IntervalTimingEnv",
        "nalu_rl.envs.vector:IntervalTimingVectorEnv",
    ),
}
# Each cue task's module holds its single env `<Name>Env` and vector env `<Name>VectorEnv`.
_CUE_TASK_MODULES = {
    "ReadySetGo": "ready_set_go",
    "ScaledReproduction": "scaled_reproduction",
    "IntervalDiscrimination": "interval_discrimination",
    "DistractorReproduction": "distractor_reproduction",
    "ContinuationTapping": "continuation_tapping",
}
CUE_TASK_IDS = tuple(f"nalu_rl/{name}-v0" for name in _CUE_TASK_MODULES)
"""The cue tasks' Gymnasium ids."""
for _name, _module in _CUE_TASK_MODULES.items():
    _ENTRY_POINTS[f"nalu_rl/{_name}-v0"] = (
        f"nalu_rl.envs.{_module}:{_name}Env",
        f"nalu_rl.envs.{_module}:{_name}VectorEnv",
    )

for _env_id, (_entry_point, _vector_entry_point) in _ENTRY_POINTS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, entry_point=_entry_point, vector_entry_point=_vector_entry_point)

__all__ = [
    "CUE_OUTCOMES",
    "CUE_TASK_IDS",
    "ENV_ID",
    "INTERVAL_TIMING_ID",
    "OUTCOMES",
    "TASK_OPTIONS",
    "ContinuationTappingEnv",
    "ContinuationTappingVectorEnv",
    "DistractorReproductionEnv",
    "DistractorReproductionVectorEnv",
    "IntervalDiscriminationEnv",
    "IntervalDiscriminationVectorEnv",
    "IntervalTimingEnv",
    "IntervalTimingVectorEnv",
    "ReadySetGoEnv",
    "ReadySetGoVectorEnv",
    "ScaledReproductionEnv",
    "ScaledReproductionVectorEnv",
    "TimeTrackEnv",
    "TimeTrackVectorEnv",
    "TimingTask",
    "is_timing_task",
    "success_ceiling",
]
