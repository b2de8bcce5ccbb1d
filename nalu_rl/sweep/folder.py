"""What the sweep keeps in a trial folder beside train's own files (config.json, checkpoint.pt,
run_status.json, TensorBoard events, the evaluation), and how it reads them back."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from nalu_rl.files import write_text_atomically

TRIAL_STATUS_FILE = "sweep_trial.json"  # written once the trial's train run has ended for good
TRIAL_HISTORY_FILE = "sweep_history.jsonl"  # one line per launch and per exit of a train process
TRAIN_LOG_FILE = "train.log"  # the train process's stdout and stderr
TRAIN_PID_FILE = "train.pid"  # "<host> <pid>" of the running train process


def read_trial_status(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The status a trial wrote when its train run ended for good, or None."""
    try:
        return json.loads((Path(folder) / TRIAL_STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None


def write_trial_status(folder: str | os.PathLike, status: dict[str, Any]) -> None:
    """Record that the trial's train run ended for good ("finished" or "failed"), atomically."""
    write_text_atomically(Path(folder) / TRIAL_STATUS_FILE, json.dumps(status) + "\n")


def read_trial_history(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The launch and exit records of a trial's train processes, oldest first."""
    path = Path(folder) / TRIAL_HISTORY_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            records.append(json.loads(line))
    return records


def append_trial_history(folder: str | os.PathLike, record: dict[str, Any]) -> None:
    """Add one record (a launch or an exit of a train process) to the trial's history, timed."""
    with open(Path(folder) / TRIAL_HISTORY_FILE, "a") as file:
        file.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")


def last_exit_description(folder: str | os.PathLike) -> str:
    """How the last train process of a trial folder ended, in a few words."""
    exits = [record for record in read_trial_history(folder) if record.get("event") == "exit"]
    if not exits:
        return "its process died"
    last = exits[-1]
    code = last.get("exit_code")
    if isinstance(code, int) and code < 0:
        return f"train was killed by {signal.Signals(-code).name} at {last.get('steps') or 0:,} steps"
    return last.get("error") or f"train exited with code {code}"


def checkpoint_steps(folder: str | os.PathLike) -> int | None:
    """Environment steps of the checkpoint in a run folder, or None without a readable one."""
    path = Path(folder) / "checkpoint.pt"
    if not path.exists():
        return None
    from nalu_rl.checkpoint import load_checkpoint
    from nalu_rl.errors import InputError

    try:
        return int(load_checkpoint(path)["steps"])
    except (InputError, KeyError, TypeError, ValueError):
        return None
