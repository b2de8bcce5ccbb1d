"""What a user watches during training: recent episodes, the progress bar and TensorBoard."""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class EpisodeWindow:
    """The most recent finished episodes (delay, success, return) and the stopping target on them.

    The target is `target_fraction` of the mean of `ceilings` (a timing task's success ceiling at
    each training delay); with no ceilings (an env that is not a timing task) there is none.
    """

    def __init__(self, capacity: int, ceilings: Sequence[float] | None, target_fraction: float) -> None:
        self.delays: deque[int] = deque(maxlen=capacity)
        self.successes: deque[bool] = deque(maxlen=capacity)
        self.returns: deque[float] = deque(maxlen=capacity)
        self.capacity = capacity
        self.mean_ceiling = float(np.mean(ceilings)) if ceilings else None
        self.target_success_rate = (
            target_fraction * self.mean_ceiling if self.mean_ceiling is not None else float("inf")
        )
        self.episodes_seen = 0
        self.successes_seen = 0

    @property
    def is_timing_task(self) -> bool:
        """The window's episodes are a timing task's (it has ceilings and a target)."""
        return self.mean_ceiling is not None

    @property
    def reports_success(self) -> bool:
        """Success means something here: a timing task, or an env that has reported a success."""
        return self.is_timing_task or self.successes_seen > 0

    def headline(self) -> str:
        """What the run is judged by, for the progress bar and the final line: the recent success on
        a timing task; the recent mean episode return otherwise (and the success where the env
        reports one). `~` marks a window that is not full yet."""
        marker = "" if self.full else "~"
        if self.is_timing_task:
            return f"success {marker}{self.success_rate():.2f}"
        text = f"return {marker}{self.mean_return():.1f}"
        if self.reports_success:
            text += f" success {marker}{self.success_rate():.2f}"
        return text

    def add(self, delays: np.ndarray, successes: np.ndarray, returns: np.ndarray) -> None:
        """Append finished episodes."""
        self.delays.extend(int(delay) for delay in delays)
        self.successes.extend(bool(success) for success in successes)
        self.returns.extend(float(value) for value in returns)
        self.episodes_seen += len(delays)
        self.successes_seen += int(np.count_nonzero(successes))

    @property
    def full(self) -> bool:
        """The window holds `capacity` episodes, so its rate is a fair estimate."""
        return len(self.successes) >= self.capacity

    def success_rate(self) -> float:
        """Fraction of successes in the window (0 when empty)."""
        return float(np.mean(self.successes)) if self.successes else 0.0

    def mean_return(self) -> float:
        """Mean episode return in the window (0 when empty)."""
        return float(np.mean(self.returns)) if self.returns else 0.0

    def score(self) -> float | None:
        """What the run is judged by, as one number: the recent success on a timing task (or where
        the env reports successes), else the recent mean return; None until the window is full."""
        if not self.full:
            return None
        return self.success_rate() if self.reports_success else self.mean_return()

    def success_rate_by_delay(self) -> dict[int, float]:
        """Success rate of the window's episodes for each delay T seen."""
        delays = np.asarray(self.delays)
        successes = np.asarray(self.successes, dtype=float)
        return {int(delay): float(successes[delays == delay].mean()) for delay in np.unique(delays)}

    def target_reached(self) -> bool:
        """The window is full and its success rate meets the target."""
        return self.full and self.success_rate() >= self.target_success_rate


class Dashboard:
    """Progress bar (steps, SPS, recent success, ETA) and TensorBoard scalars of one run."""

    def __init__(self, logdir: str | Path, total_steps: int, start_steps: int, progress: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self.writer = SummaryWriter(str(logdir))
        self.bar = tqdm(
            total=total_steps,
            initial=start_steps,
            disable=not progress,
            unit="step",
            unit_scale=True,
            smoothing=0.1,
            # Redrawn at most every 0.1 s on a terminal; into a log file a line every 10 s is enough.
            mininterval=0.1 if sys.stderr.isatty() else 10.0,
        )
        self.shown_steps = start_steps
        self.started = time.perf_counter()
        self.start_steps = start_steps

    def steps_per_second(self, steps: int) -> float:
        """Environment steps per second since this dashboard opened (the one definition of SPS)."""
        elapsed = time.perf_counter() - self.started
        return (steps - self.start_steps) / elapsed if elapsed > 0 else 0.0

    def show(self, steps: int, window: EpisodeWindow) -> None:
        """Move the progress bar to `steps` and show SPS and `window.headline()`."""
        self.bar.update(max(0, min(steps, self.bar.total) - self.shown_steps))
        self.shown_steps = min(steps, self.bar.total)
        self.bar.set_postfix_str(
            f"SPS {self.steps_per_second(steps):,.0f} {window.headline()}",
            refresh=False,  # drawn with the next update that the bar's interval lets through
        )

    def log(self, steps: int, scalars: dict[str, float]) -> None:
        """Write `scalars` at global step `steps`."""
        for name, value in scalars.items():
            self.writer.add_scalar(name, value, steps)
        self.writer.flush()

    def log_unit_weights(self, steps: int, model: Any) -> None:
        """Histograms of the effective weights of every arithmetic unit in `model` (for the NAC,
        W = tanh(W_hat) * sigmoid(M_hat)), so a user can watch them approach -1, 0 and +1."""
        from nalu_rl.units import ARITHMETIC_UNITS

        unit_classes = tuple(ARITHMETIC_UNITS.values())
        for name, module in model.named_modules():
            if isinstance(module, unit_classes):
                self.writer.add_histogram(f"units/{name}.weight", module.weight.detach().cpu(), steps)
        self.writer.flush()

    def log_image_file(self, tag: str, path: str | Path, steps: int) -> None:
        """Add a PNG file (e.g. the success-vs-T figure) as an image."""
        import imageio.v2 as imageio

        image = np.asarray(imageio.imread(path))[..., :3]
        self.writer.add_image(tag, image, steps, dataformats="HWC")
        self.writer.flush()

    def log_clip(self, tag: str, frames: list[np.ndarray], steps: int, fps: float) -> None:
        """Add RGB frames [H, W, 3] as a looping animated clip (shown in TensorBoard's images tab)."""
        import io

        import imageio.v2 as imageio
        from tensorboard.compat.proto.summary_pb2 import Summary

        encoded = io.BytesIO()
        imageio.mimsave(encoded, frames, format="GIF", duration=1000.0 / fps, loop=0)
        height, width = frames[0].shape[:2]
        image = Summary.Image(
            height=height, width=width, colorspace=3, encoded_image_string=encoded.getvalue()
        )
        self.writer.file_writer.add_summary(Summary(value=[Summary.Value(tag=tag, image=image)]), steps)
        self.writer.flush()

    def close(self, hparams: dict[str, Any], metrics: dict[str, float]) -> None:
        """Write the hparams with their final metrics, close the writer and the bar."""
        plain = {
            key: value if isinstance(value, int | float | str | bool) else str(value)
            for key, value in hparams.items()
        }
        self.writer.add_hparams(
            plain, {f"hparam/{key}": value for key, value in metrics.items()}, run_name="."
        )
        self.writer.close()
        self.bar.close()
