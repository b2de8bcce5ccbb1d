"""The timing gridworlds as Gymnasium environments: TimeTrack (NALU paper, section 4.5) and IntervalTiming.

Importing this package registers `nalu_rl/TimeTrack-v0` (`TimeTrackEnv`, native vector env
`TimeTrackVectorEnv`) and `nalu_rl/IntervalTiming-v0` (`IntervalTimingEnv`, `IntervalTimingVectorEnv`)
for `gymnasium.make` and `gymnasium.make_vec`. Both follow the timing-task interface of
`nalu_rl.envs.task` (`TimingTask`, `is_timing_task`).
"""

import gymnasium

from nalu_rl.envs.interval_timing import IntervalTimingEnv
from nalu_rl.envs.rules import OUTCOMES, success_ceiling
from nalu_rl.envs.task import TASK_OPTIONS, TimingTask, is_timing_task
from nalu_rl.envs.time_track import TimeTrackEnv
from nalu_rl.envs.vector import IntervalTimingVectorEnv, TimeTrackVectorEnv

ENV_ID = "nalu_rl/TimeTrack-v0"
"""TimeTrack's Gymnasium id."""
INTERVAL_TIMING_ID = "nalu_rl/IntervalTiming-v0"
"""IntervalTiming's Gymnasium id."""

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="nalu_rl.envs.time_track:TimeTrackEnv",
        vector_entry_point="nalu_rl.envs.vector:TimeTrackVectorEnv",
    )
if INTERVAL_TIMING_ID not in gymnasium.registry:
    gymnasium.register(
        id=INTERVAL_TIMING_ID,
        entry_point="nalu_rl.envs.interval_timing:IntervalTimingEnv",
        vector_entry_point="nalu_rl.envs.vector:IntervalTimingVectorEnv",
    )

__all__ = [
    "ENV_ID",
    "INTERVAL_TIMING_ID",
    "OUTCOMES",
    "TASK_OPTIONS",
    "IntervalTimingEnv",
    "IntervalTimingVectorEnv",
    "TimeTrackEnv",
    "TimeTrackVectorEnv",
    "TimingTask",
    "is_timing_task",
    "success_ceiling",
]
