"""The TimeTrack gridworld (NALU paper, section 4.5) as a Gymnasium environment.

Importing this package registers `nalu_rl/TimeTrack-v0` for `gymnasium.make` (`TimeTrackEnv`)
and `gymnasium.make_vec` (the native `TimeTrackVectorEnv`).
"""

import gymnasium

from nalu_rl.envs.rules import OUTCOMES, success_ceiling
from nalu_rl.envs.time_track import TimeTrackEnv
from nalu_rl.envs.vector import TimeTrackVectorEnv

ENV_ID = "nalu_rl/TimeTrack-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="nalu_rl.envs.time_track:TimeTrackEnv",
        vector_entry_point="nalu_rl.envs.vector:TimeTrackVectorEnv",
    )

__all__ = ["ENV_ID", "OUTCOMES", "TimeTrackEnv", "TimeTrackVectorEnv", "success_ceiling"]
