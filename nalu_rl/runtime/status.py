"""The run's state for programs that watch it: `run_status.json` in the run folder.

    {"state": "running" | "finished" | "failed" | "stopped", "steps": int, "total_steps": int,
     "reason": str | null, "error": str | null, "updated": ISO 8601 time (UTC)}

`reason` says why the run ended (the stop rule's reason); `error` is the one-line error of a run
that failed or refused its input. A run on a POPGym env adds "mmer", its score so far
(`nalu_rl.mmer.MaxMeanEpisodicReward.record`: value, complete_epochs, epoch_steps,
best_epoch_end_steps). The file is replaced atomically, so a reader never sees half of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nalu_rl.errors import one_line
from nalu_rl.files import write_text_atomically

if TYPE_CHECKING:
    from nalu_rl.runtime.run import TrainingRun

RUN_STATUS_FILE = "run_status.json"
RUN_STATES = ("running", "finished", "failed", "stopped")


def read_run_status(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The run_status.json of `folder`, or None when there is none or it cannot be read."""
    try:
        status = json.loads((Path(folder) / RUN_STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) and status.get("state") in RUN_STATES else None


class RunStatusFile:
    """The run_status.json of one run folder, the one place that writes it: "running" at the start
    and at each checkpoint, how the run ended at its end, or the input error that refused it."""

    def __init__(self, folder: str | os.PathLike, total_steps: int) -> None:
        self.folder = Path(folder)
        self.total_steps = total_steps
        # More entries of the file (a POPGym run's "mmer"), each read when the file is written.
        self.extra_entries: dict[str, Callable[[], Any]] = {}

    def running(self, steps: int) -> None:
        """The run trains and has taken `steps` steps."""
        self._write("running", steps, self.total_steps)

    def ended(self, run: TrainingRun, crash: BaseException | None = None) -> None:
        """How `run` ended: "finished" by its stop rule, "stopped" by a signal, or "failed" (its stop
        rule's failure, or `crash`, the exception that ended it)."""
        error = None
        if isinstance(crash, KeyboardInterrupt):
            state, reason = "stopped", "stopped by SIGINT"
        elif crash is not None:
            state, reason, error = "failed", "failed", f"{type(crash).__name__}: {crash}"
        elif run.failure is not None:
            state, reason, error = "failed", run.stop_reason, run.failure
        else:
            state = "stopped" if run.signal_received is not None else "finished"
            reason = run.stop_reason
        self._write(state, run.steps, self.total_steps, reason=reason, error=error)

    def refused(self, error: str) -> None:
        """The run refused its input (state "failed"), keeping the step counts of the status it replaces."""
        previous = read_run_status(self.folder) or {}
        steps, total = previous.get("steps"), previous.get("total_steps")
        self._write(
            "failed",
            steps if isinstance(steps, int) else 0,
            total if isinstance(total, int) else self.total_steps,
            error=error,
        )

    def _write(
        self, state: str, steps: int, total_steps: int, reason: str | None = None, error: str | None = None
    ) -> None:
        if state not in RUN_STATES:
            raise ValueError(f"unknown run state {state!r}; expected one of {', '.join(RUN_STATES)}")
        status = {
            "state": state,
            "steps": int(steps),
            "total_steps": int(total_steps),
            "reason": reason,
            "error": None if error is None else one_line(error),
            "updated": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        }
        status.update({name: entry() for name, entry in self.extra_entries.items()})
        write_text_atomically(self.folder / RUN_STATUS_FILE, json.dumps(status) + "\n")
