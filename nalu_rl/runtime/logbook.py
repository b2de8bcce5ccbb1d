"""The run's TensorBoard log: what one log writes (the scalars of the run, now and then the units'
weight histograms) and what the logs count from one write to the next (steps, busy time)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nalu_rl.runtime.run import TrainingRun

# TensorBoard histograms of the arithmetic units' weights are written every this many logs.
HISTOGRAM_EVERY_LOGS = 6


class LogBook:
    """When a run last wrote its log, at which step and busy times, and how many logs it wrote."""

    def __init__(self, steps: int, busy_seconds: dict[str, float]) -> None:
        self.last_time = time.perf_counter()
        self.last_steps = steps
        self.last_busy_seconds = dict(busy_seconds)
        self.written = 0

    def due(self, now: float, interval_s: float) -> bool:
        """Whether `interval_s` seconds have passed since the last log."""
        return now - self.last_time >= interval_s

    def write(self, run: TrainingRun, now: float | None = None) -> None:
        """Write the run's current scalars (and, every HISTOGRAM_EVERY_LOGS logs, the units' weight
        histograms) to its TensorBoard dashboard; nothing without one."""
        if run.dashboard is None:
            return
        now = time.perf_counter() if now is None else now
        interval = max(now - self.last_time, 1e-9)
        config, counters, window = run.config, run.counters, run.window
        scalars = dict(run.last_metrics)
        scalars.update(run.scalars)
        scalars["charts/SPS"] = run.dashboard.steps_per_second(run.steps)
        scalars["charts/SPS_recent"] = (run.steps - self.last_steps) / interval
        if window.reports_success:
            scalars["charts/success_rate"] = window.success_rate()
        scalars["charts/episode_return"] = window.mean_return()
        scalars["charts/episodes"] = counters.episodes
        if window.mean_ceiling is not None:
            for delay, rate in window.success_rate_by_delay().items():
                scalars[f"success_by_delay/T{delay:02d}"] = rate
        scalars["runtime/nan_skipped_updates"] = counters.bad_updates
        scalars["runtime/actor_restarts"] = counters.worker_restarts
        scalars["runtime/updates"] = run.updates
        busy = {role: seconds - self.last_busy_seconds[role] for role, seconds in run.busy_seconds.items()}
        scalars["runtime/learner_busy"] = busy["learner"] / interval
        if config.actors == 0 or config.runtime == "hogwild":
            scalars["runtime/actor_busy"] = busy["actor"] / interval / max(1, config.actors)
        run.dashboard.log(run.steps, scalars)
        if self.written % HISTOGRAM_EVERY_LOGS == 0:
            with run.checkpoint_lock:
                run.dashboard.log_unit_weights(run.steps, run.model)
        self.written += 1
        self.last_time, self.last_steps = now, run.steps
        self.last_busy_seconds = dict(run.busy_seconds)
