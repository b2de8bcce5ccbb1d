"""Why a run must end, if it must: a signal, a failure (updates that are not finite, worker processes
that die without delivering a step), the step or time budget, or the success target; and the counts
of what happened in the run that the rule reads (`RunCounters`)."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from nalu_rl.config import Config
from nalu_rl.runtime.monitor import EpisodeWindow

# Worker processes that may die in a row, with no step delivered in between, before the run gives up.
MAX_RESTARTS_WITHOUT_PROGRESS = 10


@dataclass
class RunCounters:
    """What happened so far in a run, beyond steps and updates (logged to TensorBoard)."""

    episodes: int = 0
    bad_updates: int = 0
    bad_updates_in_a_row: int = 0
    worker_restarts: int = 0
    restarts_without_progress: int = 0
    steps_at_last_restart: int = -1
    max_policy_lag: int = 0
    # Times the regulariser's gate closed again (--regularizer-gate-fall).
    regularizer_closings: int = 0


class StopRule:
    """Why a run must end, if it must: a signal, a failure, the step budget or the success target."""

    def __init__(self, config: Config, logdir: Path) -> None:
        self.config = config
        self.logdir = logdir
        self.signal_received: int | None = None
        # When the first SIGINT / SIGTERM arrived (time.perf_counter()), None before.
        self.signal_received_at: float | None = None
        self.reason: str | None = None
        self.failure: str | None = None
        self.started = time.perf_counter()

    def check(self, steps: int, counters: RunCounters, window: EpisodeWindow) -> bool:
        """Decide on the current state; True once the run must end (the first reason found sticks)."""
        if self.reason is not None:
            return True
        if self.signal_received is not None:
            self.reason = f"stopped by {signal.Signals(self.signal_received).name}"
        elif counters.bad_updates_in_a_row >= self.config.max_bad_updates:
            self.failure = (
                f"{counters.bad_updates_in_a_row} updates in a row had a NaN/inf loss or "
                f"gradient; stopped, the last good checkpoint is {self.logdir / 'checkpoint.pt'}"
            )
        elif counters.restarts_without_progress >= MAX_RESTARTS_WITHOUT_PROGRESS:
            self.failure = (
                f"{counters.restarts_without_progress} worker processes died in a row without "
                "delivering a step (their errors are above); stopped"
            )
        elif steps >= self.config.total_steps:
            self.reason = f"step budget of {self.config.total_steps:,} spent"
        elif self.config.time_budget_s and time.perf_counter() - self.started >= self.config.time_budget_s:
            self.reason = f"time budget of {self.config.time_budget_s:g} s spent"
        elif window.target_reached():
            self.reason = (
                f"target reached: success {window.success_rate():.3f} >= "
                f"{window.target_success_rate:.3f} over the last {window.capacity} episodes"
            )
        if self.failure is not None:
            self.reason = "failed"
        return self.reason is not None
