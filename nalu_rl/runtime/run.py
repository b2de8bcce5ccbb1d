"""The run: the model and optimizer a runtime trains, its counts, logs and checkpoints; why it must
end is its stop rule's (`runtime/stop_rule.py`).

The runtimes (`learner`, `hogwild`, `device`) report what happened through `TrainingRun`'s methods
(`record_batch`, `record_update`, `workers_replaced`, `add_busy_time`, `set_scalar`) and ask
`should_stop()` once per turn of their loop; they never write the run's state themselves.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.checkpoint import build_model, load_checkpoint, save_checkpoint, upgrade_model_state
from nalu_rl.config import Config
from nalu_rl.environment import RunEnvironment
from nalu_rl.errors import CheckpointError
from nalu_rl.runtime.logbook import LogBook
from nalu_rl.runtime.monitor import Dashboard, EpisodeWindow
from nalu_rl.runtime.normalization import RewardNormalizer
from nalu_rl.runtime.rollout import RolloutBatch
from nalu_rl.runtime.status import RunStatusFile
from nalu_rl.runtime.stop_rule import RunCounters, StopRule
from nalu_rl.units import ArithmeticUnit

# Seconds between looks at whether the recent training score is the run's best (then best.pt is written).
BEST_CHECK_INTERVAL_S = 10.0
# The file of the run's model at its best recent training score (the latest is checkpoint.pt).
BEST_CHECKPOINT = "best.pt"


def build_optimizer(model: torch.nn.Module, config: Config) -> torch.optim.Adam:
    """Adam over the model's parameters, the arithmetic units' weights at --unit-lr-scale times the rate.

    With a scale of 1 there is one parameter group; otherwise the units' weights form a second. Each
    group carries its `lr_scale`, so a resumed run can set a new --learning-rate on every group.
    """
    unit_parameters = {
        id(parameter)
        for module in model.modules()
        if isinstance(module, ArithmeticUnit)
        for parameter in module.parameters()
    }
    parameters = list(model.parameters())
    if config.unit_lr_scale == 1.0 or not unit_parameters:
        groups = [{"params": parameters, "lr_scale": 1.0}]
    else:
        groups = [
            {"params": [p for p in parameters if id(p) not in unit_parameters], "lr_scale": 1.0},
            {"params": [p for p in parameters if id(p) in unit_parameters], "lr_scale": config.unit_lr_scale},
        ]
    for group in groups:
        group["lr"] = config.learning_rate * group["lr_scale"]
    return torch.optim.Adam(groups, lr=config.learning_rate)


def training_range_ceilings(environment: RunEnvironment) -> list[float] | None:
    """The success ceiling at each delay of a timing task's training range; None for another env
    (its runs stop on their step budget only)."""
    if not environment.is_timing_task:
        return None
    low, high = environment.delay_range
    return [environment.success_ceiling(delay) for delay in range(low, high + 1)]


class TrainingRun:
    """One training run: model, optimizer, counts, the stop rule, logs and checkpoints."""

    def __init__(self, config: Config, logdir: Path, resume_payload: dict[str, Any] | None = None) -> None:
        self.config = config
        self.logdir = logdir
        self.device = torch.device(config.resolved_device())
        # One env of the run, for its spaces and, on a timing task, the ceilings of the stop target.
        with config.environment() as environment:
            observation_space, num_actions = environment.spaces()
            ceilings = training_range_ceilings(environment)
        # Seeded before the model is built, so that --seed fixes its initial weights too.
        torch.manual_seed(config.seed)
        # A resumed run keeps the wiring it was started with, even if the registry has moved since.
        try:
            stored = resume_payload or {}
            self.model = build_model(
                config.agent, observation_space, num_actions, stored.get("wiring"), stored.get("observation")
            )
        except (AttributeError, TypeError, ValueError) as error:
            raise CheckpointError(
                f"cannot resume from this checkpoint: its wiring is invalid: {error}"
            ) from None
        self.model.to(self.device)
        self.optimizer = build_optimizer(self.model, config)
        self.steps = 0
        self.updates = 0
        self.start_steps = 0
        self.elapsed_before = 0.0
        # The step at which the regulariser's ramp starts counting: 0, or with
        # --regularizer-gate-success the step at which the recent success first reached it (None before).
        self.regularizer_opened_at: int | None = None if config.regularizer_gate_success else 0
        self.rng = np.random.default_rng(config.seed)
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        # The running statistics of --return-norm are the run's: saved and resumed with it.
        self.reward_normalizer = RewardNormalizer() if config.return_norm else None
        # The best recent training score so far (`EpisodeWindow.score`) and its step: what best.pt holds.
        self.best_score: float | None = None
        self.best_steps = 0
        if resume_payload is not None:
            self._restore(resume_payload)
            self._restore_best(logdir / BEST_CHECKPOINT)
        self.window = EpisodeWindow(config.success_window, ceilings, config.target_fraction)
        self.counters = RunCounters()
        self.stop_rule = StopRule(config, logdir)
        self.busy_seconds = {"actor": 0.0, "learner": 0.0}
        self.scalars: dict[str, float] = {}
        self.last_metrics: dict[str, float] = {}
        self.on_close: list[Callable[[], None]] = []
        self.dashboard: Dashboard | None = None
        # Held while a checkpoint reads the model and optimizer (hogwild workers step under it).
        self.checkpoint_lock: Any = contextlib.nullcontext()
        self.started = self.last_checkpoint = self.last_best_check = time.perf_counter()
        self.first_batch_time: float | None = None
        self.first_batch_steps = 0
        self.log_book = LogBook(self.steps, self.busy_seconds)
        self.status_file = RunStatusFile(logdir, config.total_steps)

    # -- resume ----------------------------------------------------------------------------
    def _restore(self, payload: dict[str, Any]) -> None:
        try:
            self.model.load_state_dict(upgrade_model_state(self.model, payload["model"]))
            scales = [group["lr_scale"] for group in self.optimizer.param_groups]
            self.optimizer.load_state_dict(payload["optimizer"])
            # Adam's saved state carries the old learning rates; a --learning-rate given on resume wins.
            for group, scale in zip(self.optimizer.param_groups, scales, strict=True):
                group["lr_scale"] = scale
                group["lr"] = self.config.learning_rate * scale
            self.steps = self.start_steps = int(payload["steps"])
            self.updates = int(payload["updates"])
            opened_at = int(payload.get("regularizer_opened_at", 0))
            if opened_at >= 0 or not self.config.regularizer_gate_success:
                self.regularizer_opened_at = max(opened_at, 0)
            self.elapsed_before = float(payload.get("elapsed_seconds", 0.0))
            self._take_best(payload.get("best"))
            if self.reward_normalizer is not None and payload.get("reward_normalizer"):
                self.reward_normalizer.load_state_dict(payload["reward_normalizer"])
            rng = payload["rng"]
            torch.set_rng_state(rng["torch"])
            self.rng.bit_generator.state = json.loads(rng["numpy"])
            state = json.loads(rng["python"])
            random.setstate((state[0], tuple(state[1]), state[2]))
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(
                f"cannot resume from this checkpoint: {type(error).__name__}: {error}"
            ) from None

    def _restore_best(self, path: Path) -> None:
        """Take best.pt's own record where it is newer than the checkpoint's (written after it)."""
        if path.exists():
            self._take_best(load_checkpoint(path).get("best"))

    def _take_best(self, record: dict[str, Any] | None) -> None:
        """Adopt a saved best record ({"score", "steps"}) when it beats the one held."""
        if record is not None and (self.best_score is None or float(record["score"]) > self.best_score):
            self.best_score, self.best_steps = float(record["score"]), int(record["steps"])

    def checkpoint_payload(self) -> dict[str, Any]:
        """Everything needed to resume, loadable with weights_only=True."""
        python_state = random.getstate()
        return {
            "config": self.config.to_dict(),
            "model": {key: value.detach().cpu() for key, value in self.model.state_dict().items()},
            "wiring": self.model.wiring.to_dict(),
            "observation": self.model.observation_preprocessing,
            "action_sizes": self.model.num_actions,
            "optimizer": self.optimizer.state_dict(),
            "steps": self.steps,
            "updates": self.updates,
            "regularizer_opened_at": -1 if self.regularizer_opened_at is None else self.regularizer_opened_at,
            "elapsed_seconds": self.elapsed_seconds(),
            "reward_normalizer": self.reward_normalizer.state_dict() if self.reward_normalizer else None,
            "best": None if self.best_score is None else {"score": self.best_score, "steps": self.best_steps},
            "rng": {
                "torch": torch.get_rng_state(),
                "numpy": json.dumps(self.rng.bit_generator.state),
                "python": json.dumps([python_state[0], list(python_state[1]), python_state[2]]),
            },
        }

    def _write_checkpoint(self, name: str) -> None:
        """Write the run's checkpoint payload to `name` in the run folder, atomically."""
        with self.checkpoint_lock:
            payload = self.checkpoint_payload()
        save_checkpoint(self.logdir / name, payload)

    def save(self) -> None:
        """Write checkpoint.pt atomically (and the run's status with its steps)."""
        self._write_checkpoint("checkpoint.pt")
        self.status_file.running(self.steps)
        self.last_checkpoint = time.perf_counter()

    def save_if_best(self) -> bool:
        """Write best.pt (the checkpoint, atomically) when the recent training score, a full window's,
        is above every earlier one of the run; True when it did. A checkpoint chosen this way is
        chosen by the training range alone."""
        score = self.window.score()
        if score is None or (self.best_score is not None and score <= self.best_score):
            return False
        self.best_score, self.best_steps = score, self.steps
        self._write_checkpoint(BEST_CHECKPOINT)
        return True

    # -- what the runtimes report ------------------------------------------------------------
    def elapsed_seconds(self) -> float:
        """Training wall time, resumed runs included."""
        return self.elapsed_before + time.perf_counter() - self.started

    def next_seed(self) -> int:
        """A fresh seed for a worker's environments (drawn from the run's RNG, so resumes continue it)."""
        return int(self.rng.integers(0, 2**31 - 1))

    def record_batch(self, batch: RolloutBatch) -> None:
        """Count the steps of a batch and add the episodes that ended in it to the window."""
        self.record_steps(batch.num_steps, *batch.ended_episodes())

    def record_steps(
        self, steps: int, delays: np.ndarray, successes: np.ndarray, returns: np.ndarray
    ) -> None:
        """Count `steps` environment steps and the episodes that ended in them (success: outcome
        "success")."""
        self.steps += steps
        if len(delays):
            self.window.add(delays, successes, returns)
            self.counters.episodes += len(delays)

    def regularizer_steps(self) -> int:
        """The steps the regulariser's ramp has counted: all of them, or with --regularizer-gate-success
        p those since the recent training success (a full window) first reached p; -1 (no
        regulariser) before that."""
        if self.regularizer_opened_at is None:
            gate = self.config.regularizer_gate_success
            if not (self.window.full and self.window.success_rate() >= gate):
                return -1
            self.regularizer_opened_at = self.steps
        return self.steps - self.regularizer_opened_at

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

    def record_policy_lag(self, lags: torch.Tensor) -> None:
        """Account for the policy lag (learner version minus acting version) of a batch's unrolls."""
        self.counters.max_policy_lag = max(self.counters.max_policy_lag, int(lags.max()))
        self.scalars["runtime/policy_lag"] = float(lags.float().mean())
        self.scalars["runtime/policy_lag_max"] = float(lags.max())

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

    def add_busy_time(self, role: str, seconds: float) -> None:
        """Add time spent working by the "actor" or "learner" side (for the busy fractions logged)."""
        self.busy_seconds[role] += seconds

    def set_scalar(self, name: str, value: float) -> None:
        """A runtime-specific value to write with the next TensorBoard log."""
        self.scalars[name] = value

    # -- the loop's heartbeat ----------------------------------------------------------------
    def request_stop(self, signum: int) -> None:
        """Ask the run to stop at the next `should_stop` (what SIGINT and SIGTERM do)."""
        if self.stop_rule.signal_received_at is None:
            self.stop_rule.signal_received_at = time.perf_counter()
        self.stop_rule.signal_received = signum

    @property
    def stop_reason(self) -> str | None:
        """Why the run stopped ("failed" when it failed), None while it runs."""
        return self.stop_rule.reason

    @property
    def failure(self) -> str | None:
        """What made the run fail, None unless it failed."""
        return self.stop_rule.failure

    @property
    def signal_received(self) -> int | None:
        """The signal that stopped the run, if one did."""
        return self.stop_rule.signal_received

    def steady_steps_per_second(self) -> float:
        """SPS from the first trained batch to now (process start-up and first weights excluded)."""
        if self.first_batch_time is None:
            return 0.0
        elapsed = time.perf_counter() - self.first_batch_time
        return (self.steps - self.first_batch_steps) / elapsed if elapsed > 0 else 0.0

    def should_stop(self) -> bool:
        """Refresh progress, logs and checkpoints; True once the run must end (why: `stop_reason`)."""
        now = time.perf_counter()
        if self.first_batch_time is None and self.steps > self.start_steps:
            self.first_batch_time, self.first_batch_steps = now, self.steps
        if self.dashboard is not None:
            self.dashboard.show(self.steps, self.window)
            if self.log_book.due(now, self.config.log_interval_s):
                self.log(now)
        if self.stop_rule.check(self.steps, self.counters, self.window):
            return True
        if now - self.last_best_check >= BEST_CHECK_INTERVAL_S:
            self.last_best_check = now
            self.save_if_best()
        if now - self.last_checkpoint >= self.config.checkpoint_interval_s:
            self.save()
        return False

    def log(self, now: float | None = None) -> None:
        """Write the current scalars (and, now and then, the units' weight histograms) to TensorBoard."""
        self.log_book.write(self, now)

    @contextlib.contextmanager
    def stop_on_signals(self, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
        """Within the block, SIGINT and SIGTERM ask the run to stop instead of killing it.

        Signal handlers can only be installed from the main thread; elsewhere (e.g. a run started in
        a worker thread) the block runs without them and the run stops by its own rule only.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {
            sig: signal.signal(sig, lambda signum, _frame: self.request_stop(signum)) for sig in signals
        }
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def close(self) -> None:
        """Stop whatever the runtime left running."""
        for close in list(self.on_close):
            close()
