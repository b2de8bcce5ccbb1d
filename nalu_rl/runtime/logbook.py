"""The run's logs: its dashboard (TensorBoard and the progress bar) and run_status.json, what one
TensorBoard log writes (the scalars of the run, now and then the units' weight histograms) and what
the logs count from one write to the next (steps, busy time)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from nalu_rl.mmer import MMER_SCALAR
from nalu_rl.runtime.monitor import Dashboard
from nalu_rl.runtime.status import RunStatusFile

if TYPE_CHECKING:
    from nalu_rl.runtime.run import TrainingRun

# TensorBoard histograms of the arithmetic units' weights are written every this many logs.
HISTOGRAM_EVERY_LOGS = 6


class LogBook:
    """The logs of the run in `logdir`: its dashboard (set when training starts), its status file, the
    busy time of each side and the runtime's own scalars, and when the last log was written."""

    def __init__(self, logdir: Path, total_steps: int, steps: int) -> None:
        self.dashboard: Dashboard | None = None
        self.status_file = RunStatusFile(logdir, total_steps)
        # Time spent working by the "actor" and the "learner" side (for the busy fractions logged).
        self.busy_seconds = {"actor": 0.0, "learner": 0.0}
        # Runtime-specific values written with the next log.
        self.scalars: dict[str, float] = {}
        self.last_time = time.perf_counter()
        self.last_steps = steps
        self.last_busy_seconds = dict(self.busy_seconds)
        self.written = 0

    def due(self, now: float, interval_s: float) -> bool:
        """Whether `interval_s` seconds have passed since the last log."""
        return now - self.last_time >= interval_s

    def write(self, run: TrainingRun, now: float | None = None) -> None:
        """Write the run's current scalars (and, every HISTOGRAM_EVERY_LOGS logs, the units' weight
        histograms) to its TensorBoard dashboard; nothing without one."""
        dashboard = self.dashboard
        if dashboard is None:
            return
        now = time.perf_counter() if now is None else now
        interval = max(now - self.last_time, 1e-9)
        config, progress = run.config, run.progress
        counters, window, steps = progress.counters, progress.window, progress.steps
        scalars = dict(progress.last_metrics)
        scalars.update(self.scalars)
        scalars["charts/SPS"] = dashboard.steps_per_second(steps)
        scalars["charts/SPS_recent"] = (steps - self.last_steps) / interval
        if window.reports_success:
            scalars["charts/success_rate"] = window.success_rate()
        scalars["charts/episode_return"] = window.mean_return()
        scalars["charts/episodes"] = counters.episodes
        if progress.mmer is not None and progress.mmer.value is not None:
            scalars[MMER_SCALAR] = progress.mmer.value
        if window.mean_ceiling is not None:
            for delay, rate in window.success_rate_by_delay().items():
                scalars[f"success_by_delay/T{delay:02d}"] = rate
        scalars["runtime/nan_skipped_updates"] = counters.bad_updates
        scalars["runtime/actor_restarts"] = counters.worker_restarts
        if config.regularizer_gate_fall:
            scalars["runtime/regularizer_closings"] = counters.regularizer_closings
        if progress.earned_handover is not None:
            for head in ("student", "teacher"):
                success = progress.earned_handover.success(head)
                if success is not None:
                    scalars[f"handover/{head}_success"] = success
        scalars["runtime/updates"] = progress.updates
        busy = {role: seconds - self.last_busy_seconds[role] for role, seconds in self.busy_seconds.items()}
        scalars["runtime/learner_busy"] = busy["learner"] / interval
        if config.actors == 0 or config.runtime == "hogwild":
            scalars["runtime/actor_busy"] = busy["actor"] / interval / max(1, config.actors)
        dashboard.log(steps, scalars)
        if self.written % HISTOGRAM_EVERY_LOGS == 0:
            with run.checkpoints.lock:
                dashboard.log_unit_weights(steps, run.model)
        self.written += 1
        self.last_time, self.last_steps = now, steps
        self.last_busy_seconds = dict(self.busy_seconds)
