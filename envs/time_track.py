"""TimeTrackEnv: reach the target exactly T steps after the stimulus (NALU paper, section 4.5)."""

from __future__ import annotations

from nalu_rl.envs.rules import TimeTrackConfig
from nalu_rl.envs.task import TASK_OPTIONS
from nalu_rl.envs.timing_grid import TimingGridEnv

TIME_TRACK_OPTIONS = TASK_OPTIONS


class TimeTrackEnv(TimingGridEnv):
    """A gridworld where the agent must arrive on the target exactly T steps after the stimulus.

    Actions: 0 UP, 1 DOWN, 2 LEFT, 3 RIGHT, 4 PASS. Arrival at time t ends the episode with reward
    `max(-1, 1 - |t - T| / 2)` (graded) or +-1 (exact); no arrival by T + slack ends it with -1
    (`terminated`, never `truncated`). The stimulus is T in the first observation (or in every one,
    `stimulus="always"`). `info` holds `delay`, `t`, `distance` and, on the last step, `outcome`
    (one of OUTCOMES) and `success`. `reset(options={"delay": T})` fixes T for that episode.
    The keyword arguments are the fields of `TimeTrackConfig` (size, delay_range, max_delay, slack,
    obs_mode, stimulus, reward_mode, cell_px, render_mode), with its defaults and validation.
    """

    metadata = {
        **TimingGridEnv.metadata,
        "task_options": TIME_TRACK_OPTIONS,
        "delay_meaning": "the steps to wait after the stimulus",
    }
    config_class = TimeTrackConfig
    window_title = "TimeTrack"
