"""The run's progress: its step, update and episode counts, the success window of recent episodes,
when the regulariser's ramp opened, the steady SPS and, on a POPGym env, its MMER; what the runtimes'
reports add to and the stop rule, the logs and the checkpoint read."""

from __future__ import annotations

from typing import Any

import numpy as np

from nalu_rl.mmer import MaxMeanEpisodicReward
from nalu_rl.runtime.handover import EarnedHandover
from nalu_rl.runtime.monitor import EpisodeWindow
from nalu_rl.runtime.stop_rule import RunCounters


class RunProgress:
    """Steps, updates and episodes of one run (resumed runs continue their counts)."""

    def __init__(self, config: Any, ceilings: list[float] | None, track_mmer: bool = False) -> None:
        self.steps = 0
        self.updates = 0
        self.start_steps = 0
        self.regularizer_gate = config.regularizer_gate_success
        self.regularizer_gate_fall = config.regularizer_gate_fall
        # The step at which the regulariser's ramp starts counting: 0, or with
        # --regularizer-gate-success the step at which the recent success first reached it (None before).
        self.regularizer_opened_at: int | None = None if self.regularizer_gate else 0
        self.window = EpisodeWindow(config.success_window, ceilings, config.target_fraction)
        self.counters = RunCounters()
        self.last_metrics: dict[str, float] = {}
        self.first_batch_time: float | None = None
        self.first_batch_steps = 0
        # POPGym's score of the run (nalu_rl.mmer), kept on a POPGym env only (None elsewhere).
        self.mmer = MaxMeanEpisodicReward() if track_mmer else None
        # A teacher's handover earned by its student (--handover-earned; None otherwise).
        self.earned_handover = EarnedHandover(config) if config.handover_earned else None

    def restore(self, payload: dict[str, Any]) -> None:
        """Continue the counts of a checkpoint payload (`state` wrote them)."""
        self.steps = self.start_steps = int(payload["steps"])
        self.updates = int(payload["updates"])
        opened_at = int(payload.get("regularizer_opened_at", 0))
        if opened_at >= 0 or not self.regularizer_gate:
            self.regularizer_opened_at = max(opened_at, 0)
        if self.mmer is not None:
            # A checkpoint written before the run kept its MMER starts one from the resumed step.
            stored = payload.get("mmer")
            self.mmer = (
                MaxMeanEpisodicReward.restore(stored)
                if stored is not None
                else MaxMeanEpisodicReward(start_steps=self.steps)
            )
        if self.earned_handover is not None and payload.get("earned_handover") is not None:
            self.earned_handover.restore(payload["earned_handover"])

    def state(self) -> dict[str, Any]:
        """The counts a checkpoint keeps (-1: the regulariser's gate has not opened), and the MMER's
        state (None where the run keeps none)."""
        opened_at = self.regularizer_opened_at
        return {
            "steps": self.steps,
            "updates": self.updates,
            "regularizer_opened_at": -1 if opened_at is None else opened_at,
            "mmer": None if self.mmer is None else self.mmer.state(),
            "earned_handover": None if self.earned_handover is None else self.earned_handover.state(),
        }

    def record_steps(
        self, steps: int, delays: np.ndarray, successes: np.ndarray, returns: np.ndarray
    ) -> None:
        """Count `steps` environment steps and the episodes that ended in them (success: outcome
        "success")."""
        self.steps += steps
        if len(delays):
            self.window.add(delays, successes, returns)
            self.counters.episodes += len(delays)
        if self.mmer is not None:
            self.mmer.add(self.steps, returns)

    def record_update(self, metrics: dict[str, float] | None) -> None:
        """Account for an update: its metrics when applied, None when it was skipped because its
        loss or gradient was not finite."""
        if metrics is None:
            self.counters.bad_updates += 1
            self.counters.bad_updates_in_a_row += 1
            return
        self.updates += 1
        self.counters.bad_updates_in_a_row = 0
        self.last_metrics = metrics

    def workers_replaced(self, count: int) -> None:
        """Account for `count` dead worker processes (actors or hogwild workers) just restarted."""
        if not count:
            return
        counters = self.counters
        counters.worker_restarts += count
        if self.steps == counters.steps_at_last_restart:
            counters.restarts_without_progress += count
        else:
            counters.restarts_without_progress = count
        counters.steps_at_last_restart = self.steps

    def regularizer_steps(self) -> int:
        """The steps the regulariser's ramp has counted: all of them, or with --regularizer-gate-success
        p those since the recent training success (a full window) first reached p; -1 (no
        regulariser) before that. With --regularizer-gate-fall q the gate closes again (-1) when the
        recent success falls below q, and the ramp counts afresh once the success is back at p."""
        if self._success_fell():
            self.regularizer_opened_at = None
            self.counters.regularizer_closings += 1
        if self.regularizer_opened_at is None:
            if not (self.window.full and self.window.success_rate() >= self.regularizer_gate):
                return -1
            self.regularizer_opened_at = self.steps
        return self.steps - self.regularizer_opened_at

    def _success_fell(self) -> bool:
        """Whether the gate is open and the recent success (a full window) is below the gate's fall."""
        if self.regularizer_opened_at is None or not self.regularizer_gate_fall or not self.window.full:
            return False
        return self.window.success_rate() < self.regularizer_gate_fall

    def note_time(self, now: float) -> None:
        """Mark the first trained batch's time and step (the steady SPS counts from there)."""
        if self.first_batch_time is None and self.steps > self.start_steps:
            self.first_batch_time, self.first_batch_steps = now, self.steps

    def steady_steps_per_second(self, now: float) -> float:
        """SPS from the first trained batch to `now` (process start-up and first weights excluded)."""
        if self.first_batch_time is None:
            return 0.0
        elapsed = now - self.first_batch_time
        return (self.steps - self.first_batch_steps) / elapsed if elapsed > 0 else 0.0
