"""The TimeTrack gridworld (NALU paper, section 4.5) as a Gymnasium environment.

Importing this package registers `nalu_rl/TimeTrack-v0` for `gymnasium.make` (`TimeTrackEnv`)
and `gymnasium.make_vec` (the native `TimeTrackVectorEnv`).
"""

import gymnasium

from envs.rules import OUTCOMES, success_ceiling
from envs.time_track import TimeTrackEnv
from envs.vector import TimeTrackVectorEnv

ENV_ID = "nalu_rl/TimeTrack-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="envs.time_track:TimeTrackEnv",
        vector_entry_point="envs.vector:TimeTrackVectorEnv",
    )

__all__ = ["ENV_ID", "OUTCOMES", "TimeTrackEnv", "TimeTrackVectorEnv", "success_ceiling"]
