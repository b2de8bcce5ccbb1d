"""IntervalTimingEnv: a light shows an interval T; reproduce it by arriving T steps after it goes off.

Interval reproduction as in Deverett et al. 2019 ("Interval timing in deep reinforcement learning
agents"), on the TimeTrack grid.
"""

from __future__ import annotations

from nalu_rl.envs.rules import IntervalTimingConfig
from nalu_rl.envs.task import TASK_OPTIONS
from nalu_rl.envs.timing_grid import TimingGridEnv

INTERVAL_TIMING_OPTIONS = tuple(option for option in TASK_OPTIONS if option != "stimulus")


class IntervalTimingEnv(TimingGridEnv):
    """A gridworld where a light is on for T steps and the agent must arrive T steps after it goes off.

    The stimulus is 1.0 in the observations at t = 0..T-1 and 0.0 from t = T on; the agent may move
    all along. Arrival at t == 2T is a success; earlier (during the light too) is "early", later
    "late"; reward `max(-1, 1 - |t - 2T| / 2)` (graded) or +-1 (exact). No arrival by 2T + slack
    ends the episode with -1, outcome "timeout" (`terminated`, never `truncated`). `info` holds
    `delay` (T), `t`, `distance` and, on the last step, `outcome` and `success`.
    `reset(options={"delay": T})` fixes T for that episode. The keyword arguments are the fields of
    `IntervalTimingConfig` (size, delay_range, max_delay, slack, obs_mode, reward_mode, cell_px,
    render_mode), validated as TimeTrack's.
    """

    metadata = {
        **TimingGridEnv.metadata,
        "task_options": INTERVAL_TIMING_OPTIONS,
        "delay_meaning": "the light's length, to wait again after it goes off",
    }
    config_class = IntervalTimingConfig
    window_title = "IntervalTiming"
