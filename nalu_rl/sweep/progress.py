"""What the terminal shows while a sweep runs: each trial's steps and recent training-range success
(from its TensorBoard events), and the sweep's one progress line."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from nalu_rl.sweep.folder import read_trial_status

if TYPE_CHECKING:
    from nalu_rl.sweep.trial import TrialSpec

# The terminal gets a progress line at least this often while nothing changes.
PROGRESS_LINE_INTERVAL_S = 30.0


class TrainingProgress:
    """Steps and recent training-range success (where the run logs one) of a run, read from its
    TensorBoard events."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = str(folder)
        self.accumulator: Any = None
        self.steps = 0
        self.success_rate = math.nan

    def refresh(self) -> None:
        """Read the events written since the last refresh."""
        try:
            if self.accumulator is None:
                from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

                self.accumulator = EventAccumulator(self.folder, size_guidance={"scalars": 1})
            self.accumulator.Reload()
            tags = self.accumulator.Tags().get("scalars", [])
            # Every run logs its episode return; only timing tasks and envs that report success log
            # a success rate.
            if "charts/episode_return" in tags:
                self.steps = int(self.accumulator.Scalars("charts/episode_return")[-1].step)
            if "charts/success_rate" in tags:
                last = self.accumulator.Scalars("charts/success_rate")[-1]
                self.steps, self.success_rate = max(self.steps, int(last.step)), float(last.value)
        except Exception:  # progress is a nicety: a half-written event file must not fail the trial
            pass


class SweepProgress:
    """What the terminal shows: one line per change (trials finished / running / failed, the best
    recent training-range success), at least every PROGRESS_LINE_INTERVAL_S while trials run."""

    def __init__(
        self, name: str, specs: Sequence[TrialSpec], print_line: Callable[[str], None] = print
    ) -> None:
        self.name = name
        self.print_line = print_line
        self.state = {spec.name: "waiting" for spec in specs}
        self.success = {spec.name: math.nan for spec in specs}
        self.steps = {spec.name: 0 for spec in specs}
        self.errors: dict[str, str] = {}
        self.last_line_time = 0.0
        for spec in specs:
            status = read_trial_status(spec.folder)
            if status is not None and status.get("status") == "finished":
                self.state[spec.name] = "finished"
                self.steps[spec.name] = int(status.get("steps") or 0)

    def line(self) -> str:
        """The progress line of the sweep as it stands."""
        counts = {
            state: list(self.state.values()).count(state) for state in ("finished", "running", "failed")
        }
        waiting = len(self.state) - sum(counts.values())
        known = {name: rate for name, rate in self.success.items() if not math.isnan(rate)}
        best = ""
        if known:
            leader = max(known, key=known.__getitem__)
            best = f"; best recent training-range success {known[leader]:.3f} ({leader})"
        total_steps = sum(self.steps.values())
        return (
            f"[{time.strftime('%H:%M:%S')}] {self.name}: {counts['finished']}/{len(self.state)} finished, "
            f"{counts['running']} running, {counts['failed']} failed, {waiting} waiting{best}; "
            f"{total_steps / 1e6:.2f}M steps in all"
        )

    def show(self, force: bool = False) -> None:
        """Print the progress line if `force`, or if none was printed for PROGRESS_LINE_INTERVAL_S."""
        now = time.monotonic()
        if force or now - self.last_line_time >= PROGRESS_LINE_INTERVAL_S:
            self.print_line(self.line())
            self.last_line_time = now

    def update(self, name: str, state: str | None = None, result: dict[str, Any] | None = None) -> None:
        """Record a trial's new state or result and print a line if something changed."""
        changed = state is not None and state != self.state.get(name)
        if state is not None:
            self.state[name] = state
        if result is not None:
            if isinstance(result.get("success_rate"), int | float):
                self.success[name] = float(result["success_rate"])
            if isinstance(result.get("steps"), int | float):
                self.steps[name] = int(result["steps"])
            if result.get("error"):
                self.errors[name] = str(result["error"])
            if result.get("state") in ("finished", "failed") and result["state"] != self.state[name]:
                self.state[name], changed = result["state"], True
        self.show(force=changed)
