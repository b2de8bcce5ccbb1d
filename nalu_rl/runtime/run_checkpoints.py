"""The run's checkpoints: checkpoint.pt now and then, best.pt at the best recent training score,
each written atomically from the run's payload."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nalu_rl.checkpoint import load_checkpoint, save_checkpoint

# Seconds between looks at whether the recent training score is the run's best (then best.pt is written).
BEST_CHECK_INTERVAL_S = 10.0
# The file of the run's model at its best recent training score (the latest is checkpoint.pt).
BEST_CHECKPOINT = "best.pt"
LATEST_CHECKPOINT = "checkpoint.pt"


class RunCheckpoints:
    """When the run folder `logdir` gets checkpoint.pt (every `interval_s` seconds) and best.pt, and
    the best score so far."""

    def __init__(self, logdir: Path, interval_s: float) -> None:
        self.logdir = logdir
        self.interval_s = interval_s
        # Held while a checkpoint reads the model and optimizer (hogwild workers step under it).
        self.lock: Any = contextlib.nullcontext()
        # The best recent training score so far (`EpisodeWindow.score`) and its step: what best.pt holds.
        self.best_score: float | None = None
        self.best_steps = 0
        self.last_saved = self.last_best_check = time.perf_counter()

    def restore_best(self) -> None:
        """Take best.pt's own record where it is newer than the checkpoint's (written after it)."""
        path = self.logdir / BEST_CHECKPOINT
        if path.exists():
            self.take_best(load_checkpoint(path).get("best"))

    def take_best(self, record: dict[str, Any] | None) -> None:
        """Adopt a saved best record ({"score", "steps"}) when it beats the one held."""
        if record is not None and (self.best_score is None or float(record["score"]) > self.best_score):
            self.best_score, self.best_steps = float(record["score"]), int(record["steps"])

    def best_record(self) -> dict[str, Any] | None:
        """The best record a checkpoint keeps (None before a full window)."""
        return None if self.best_score is None else {"score": self.best_score, "steps": self.best_steps}

    def write(self, name: str, payload: Callable[[], dict[str, Any]]) -> None:
        """Write `payload()` (read under `lock`) to `name` in the run folder, atomically."""
        with self.lock:
            content = payload()
        save_checkpoint(self.logdir / name, content)

    def save(self, payload: Callable[[], dict[str, Any]]) -> None:
        """Write checkpoint.pt."""
        self.write(LATEST_CHECKPOINT, payload)
        self.last_saved = time.perf_counter()

    def save_if_best(self, score: float | None, steps: int, payload: Callable[[], dict[str, Any]]) -> bool:
        """Write best.pt when `score` (a full window's, None before) is above every earlier one of the
        run; True when it did."""
        if score is None or (self.best_score is not None and score <= self.best_score):
            return False
        self.best_score, self.best_steps = score, steps
        self.write(BEST_CHECKPOINT, payload)
        return True

    def best_check_due(self, now: float) -> bool:
        """Whether BEST_CHECK_INTERVAL_S have passed since the last look at the score (then it looks)."""
        if now - self.last_best_check < BEST_CHECK_INTERVAL_S:
            return False
        self.last_best_check = now
        return True

    def save_due(self, now: float) -> bool:
        """Whether `interval_s` seconds have passed since checkpoint.pt was last written."""
        return now - self.last_saved >= self.interval_s
