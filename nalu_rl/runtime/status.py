"""The run's state for programs that watch it: `run_status.json` in the run folder.

    {"state": "running" | "finished" | "failed" | "stopped", "steps": int, "total_steps": int,
     "reason": str | null, "error": str | null, "updated": ISO 8601 time (UTC)}

`reason` says why the run ended (the stop rule's reason); `error` is the one-line error of a run
that failed or refused its input. The file is replaced atomically, so a reader never sees half of it.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nalu_rl.errors import one_line
from nalu_rl.files import write_text_atomically

if TYPE_CHECKING:
    from nalu_rl.runtime.run import TrainingRun

RUN_STATUS_FILE = "run_status.json"
RUN_STATES = ("running", "finished", "failed", "stopped")


def write_run_status(
    folder: str | os.PathLike,
    state: str,
    steps: int,
    total_steps: int,
    reason: str | None = None,
    error: str | None = None,
) -> None:
    """Replace the run_status.json of `folder` with this state (atomically)."""
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
    write_text_atomically(Path(folder) / RUN_STATUS_FILE, json.dumps(status) + "\n")


def read_run_status(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The run_status.json of `folder`, or None when there is none or it cannot be read."""
    try:
        status = json.loads((Path(folder) / RUN_STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) and status.get("state") in RUN_STATES else None


def write_run_end(run: TrainingRun, crash: BaseException | None = None) -> None:
    """Record how `run` ended: "finished" by its stop rule, "stopped" by a signal, or "failed" (its
    stop rule's failure, or `crash`, the exception that ended it)."""
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
    write_run_status(run.logdir, state, run.steps, run.config.total_steps, reason=reason, error=error)


def write_input_error(folder: str | os.PathLike, error: str, total_steps: int) -> None:
    """Record in `folder` that a run refused its input (state "failed"), keeping the step counts of
    the status it replaces."""
    previous = read_run_status(folder) or {}
    steps = previous.get("steps")
    total = previous.get("total_steps")
    write_run_status(
        folder,
        "failed",
        steps if isinstance(steps, int) else 0,
        total if isinstance(total, int) else total_steps,
        error=error,
    )
