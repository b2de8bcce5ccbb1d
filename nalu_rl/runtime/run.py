"""The run: the model and optimizer a runtime trains, composed with one part per concern: its counts,
success window and, on a POPGym env, MMER (`RunProgress`, progress.py), why it must end (`StopRule`,
stop_rule.py), its logs and run-status file (`LogBook`, logbook.py) and its checkpoints
(`RunCheckpoints`, run_checkpoints.py).

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

from nalu_rl.agents import agent_wiring
from nalu_rl.agents.separate_critic import wiring_with_critic
from nalu_rl.checkpoint import build_model, upgrade_model_state
from nalu_rl.config import Config
from nalu_rl.environment import RunEnvironment
from nalu_rl.errors import CheckpointError, InputError
from nalu_rl.mmer import is_popgym_env
from nalu_rl.runtime.handover import outcomes_by_head
from nalu_rl.runtime.logbook import LogBook
from nalu_rl.runtime.monitor import Dashboard
from nalu_rl.runtime.normalization import RewardNormalizer
from nalu_rl.runtime.progress import RunProgress
from nalu_rl.runtime.rollout import RolloutBatch
from nalu_rl.runtime.run_checkpoints import BEST_CHECKPOINT, RunCheckpoints
from nalu_rl.runtime.stop_rule import StopRule
from nalu_rl.units import ArithmeticUnit

__all__ = ["BEST_CHECKPOINT", "TrainingRun", "build_optimizer", "training_range_ceilings"]


def build_optimizer(model: torch.nn.Module, config: Config) -> torch.optim.Adam:
    """Adam (epsilon --adam-eps) over the model's parameters, the arithmetic units' weights at
    --unit-lr-scale times the rate.

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
    return torch.optim.Adam(groups, lr=config.learning_rate, eps=config.adam_eps)


def training_range_ceilings(environment: RunEnvironment) -> list[float] | None:
    """The success ceiling at each delay of a timing task's training range; None for another env
    (its runs stop on their step budget only)."""
    if not environment.is_timing_task:
        return None
    low, high = environment.delay_range
    return [environment.success_ceiling(delay) for delay in range(low, high + 1)]


def _part_state(part: str, name: str, doc: str) -> property:
    """A read-only attribute of `TrainingRun` that is `name` of its part `part`."""
    return property(lambda run: getattr(getattr(run, part), name), doc=doc)


class TrainingRun:
    """One training run: model, optimizer and seeds, with its progress, stop rule, logs and checkpoints."""

    def __init__(self, config: Config, logdir: Path, resume_payload: dict[str, Any] | None = None) -> None:
        self.config = config
        self.logdir = logdir
        self.device = torch.device(config.resolved_device())
        # One env of the run, for its spaces and, on a timing task, the ceilings of the stop target.
        with config.environment() as environment:
            observation_space, num_actions = environment.spaces()
            ceilings = training_range_ceilings(environment)
            popgym = is_popgym_env(environment.probe)
        # Seeded before the model is built, so that --seed fixes its initial weights too.
        torch.manual_seed(config.seed)
        # A resumed run keeps the wiring it was started with, even if the registry has moved since.
        try:
            stored = resume_payload or {}
            wiring = (
                stored.get("wiring")
                or wiring_with_critic(agent_wiring(config.agent), config.separate_critic).to_dict()
            )
            self.model = build_model(
                config.agent, observation_space, num_actions, wiring, stored.get("observation")
            )
        except (AttributeError, TypeError, ValueError) as error:
            raise CheckpointError(
                f"cannot resume from this checkpoint: its wiring is invalid: {error}"
            ) from None
        self.model.to(self.device)
        self.optimizer = build_optimizer(self.model, config)
        self.progress = RunProgress(config, ceilings, track_mmer=popgym)
        student = getattr(self.model, "student", None)
        if config.handover_earned and not (student is not None and student.by_episode):
            raise InputError(
                "--handover-earned needs an agent whose teacher hands over by episodes "
                f"(Wiring.teacher_by_episode); {config.agent!r} has none"
            )
        self.checkpoints = RunCheckpoints(logdir, config.checkpoint_interval_s)
        # The episode count from which the policy has been seen acting as trained (`save_if_best`; None
        # while it does not).
        self.episodes_acting_as_trained_from: int | None = 0
        self.elapsed_before = 0.0
        self.rng = np.random.default_rng(config.seed)
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        # The running statistics of --return-norm are the run's: saved and resumed with it.
        self.reward_normalizer = RewardNormalizer() if config.return_norm else None
        if resume_payload is not None:
            self._restore(resume_payload)
            self.checkpoints.restore_best()
        self.stop_rule = StopRule(config, logdir)
        self.on_close: list[Callable[[], None]] = []
        self.log_book = LogBook(logdir, config.total_steps, self.progress.steps)
        if self.progress.mmer is not None:
            self.log_book.status_file.extra_entries["mmer"] = lambda: self.progress.mmer.record()
        self.started = time.perf_counter()

    # -- the parts' state, as the runtimes, the command line and the tests read it ---------------
    steps = _part_state("progress", "steps", "Environment steps so far (resumed runs included).")
    start_steps = _part_state(
        "progress", "start_steps", "The steps a resumed run started from (0: a new run)."
    )
    updates = _part_state("progress", "updates", "Updates applied so far.")
    window = _part_state(
        "progress", "window", "The recent episodes (`EpisodeWindow`: success, return, by delay)."
    )
    counters = _part_state("progress", "counters", "What the stop rule counts (`RunCounters`).")
    last_metrics = _part_state("progress", "last_metrics", "The metrics of the last update applied.")
    regularizer_opened_at = _part_state(
        "progress",
        "regularizer_opened_at",
        "The step the regulariser's ramp counts from (None: gate closed).",
    )
    best_score = _part_state(
        "checkpoints", "best_score", "The best recent training score so far (best.pt's)."
    )
    best_steps = _part_state("checkpoints", "best_steps", "The step of `best_score`.")

    @property
    def dashboard(self) -> Dashboard | None:
        """The run's TensorBoard writer and progress bar while it trains."""
        return self.log_book.dashboard

    @dashboard.setter
    def dashboard(self, dashboard: Dashboard | None) -> None:
        self.log_book.dashboard = dashboard

    # -- resume and checkpoints ----------------------------------------------------------------
    def _restore(self, payload: dict[str, Any]) -> None:
        try:
            self.model.load_state_dict(upgrade_model_state(self.model, payload["model"]))
            scales = [group["lr_scale"] for group in self.optimizer.param_groups]
            self.optimizer.load_state_dict(payload["optimizer"])
            # Adam's saved state carries the old learning rates and epsilon; those given on resume win.
            for group, scale in zip(self.optimizer.param_groups, scales, strict=True):
                group["lr_scale"] = scale
                group["lr"] = self.config.learning_rate * scale
                group["eps"] = self.config.adam_eps
            self.progress.restore(payload)
            self.elapsed_before = float(payload.get("elapsed_seconds", 0.0))
            self.checkpoints.take_best(payload.get("best"))
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

    def checkpoint_payload(self) -> dict[str, Any]:
        """Everything needed to resume, loadable with weights_only=True."""
        python_state = random.getstate()
        progress = self.progress.state()
        return {
            "config": self.config.to_dict(),
            "model": {key: value.detach().cpu() for key, value in self.model.state_dict().items()},
            "wiring": self.model.wiring.to_dict(),
            "observation": self.model.observation_preprocessing,
            "action_sizes": self.model.num_actions,
            "optimizer": self.optimizer.state_dict(),
            "steps": progress["steps"],
            "updates": progress["updates"],
            "regularizer_opened_at": progress["regularizer_opened_at"],
            "mmer": progress["mmer"],
            "earned_handover": progress["earned_handover"],
            "elapsed_seconds": self.elapsed_seconds(),
            "reward_normalizer": self.reward_normalizer.state_dict() if self.reward_normalizer else None,
            "best": self.checkpoints.best_record(),
            "rng": {
                "torch": torch.get_rng_state(),
                "numpy": json.dumps(self.rng.bit_generator.state),
                "python": json.dumps([python_state[0], list(python_state[1]), python_state[2]]),
            },
        }

    def save(self) -> None:
        """Write checkpoint.pt atomically (and the run's status with its steps)."""
        self.checkpoints.save(self.checkpoint_payload)
        self.log_book.status_file.running(self.steps)

    def save_if_best(self) -> bool:
        """Write best.pt (the checkpoint, atomically) when the recent training score, a full window's,
        is above every earlier one of the run; True when it did. A checkpoint chosen this way is
        chosen by the training range alone. While a teacher still acts in a policy that hands over to
        its student (`ActorCritic.acts_as_trained`), and until a full window of episodes has ended
        since it was first seen to act alone, no checkpoint is a candidate."""
        if not self.model.acts_as_trained():
            self.episodes_acting_as_trained_from = None
            return False
        if self.episodes_acting_as_trained_from is None:
            self.episodes_acting_as_trained_from = self.counters.episodes
        if self.counters.episodes - self.episodes_acting_as_trained_from < self.config.success_window:
            return False
        return self.checkpoints.save_if_best(self.window.score(), self.steps, self.checkpoint_payload)

    # -- what the runtimes report ------------------------------------------------------------
    def elapsed_seconds(self) -> float:
        """Training wall time, resumed runs included."""
        return self.elapsed_before + time.perf_counter() - self.started

    def next_seed(self) -> int:
        """A fresh seed for a worker's environments (drawn from the run's RNG, so resumes continue it)."""
        return int(self.rng.integers(0, 2**31 - 1))

    def record_batch(self, batch: RolloutBatch) -> None:
        """Count the steps of a batch and add the episodes that ended in it to the window (and, for an
        earned handover, to each head's)."""
        self.progress.record_steps(batch.num_steps, *batch.ended_episodes())
        if self.progress.earned_handover is not None:
            by_head = outcomes_by_head(self.model, batch)
            self.progress.earned_handover.record(batch.num_steps, *by_head)

    def record_steps(
        self, steps: int, delays: np.ndarray, successes: np.ndarray, returns: np.ndarray
    ) -> None:
        """Count `steps` environment steps and the episodes that ended in them (success: outcome
        "success")."""
        self.progress.record_steps(steps, delays, successes, returns)

    def regularizer_steps(self) -> int:
        """The steps the regulariser's ramp has counted (`RunProgress.regularizer_steps`; -1: none)."""
        return self.progress.regularizer_steps()

    def update_schedule(self) -> tuple[int, float, float | None]:
        """What the next update learns with (`Learner.update`'s arguments after the batch): the steps
        of the regulariser's ramp (-1: its gate is closed), the entropy bonus's weight now, and an
        earned handover's value (None where the handover follows the steps)."""
        steps = self.progress.regularizer_steps()
        earned = self.progress.earned_handover
        handover = None if earned is None else earned.value(steps)
        return steps, self.config.entropy_coef_at(self.steps), handover

    def record_update(self, metrics: dict[str, float] | None) -> None:
        """Account for an update: its metrics when applied, None when it was skipped because its
        loss or gradient was not finite."""
        self.progress.record_update(metrics)

    def record_policy_lag(self, lags: torch.Tensor) -> None:
        """Account for the policy lag (learner version minus acting version) of a batch's unrolls."""
        counters = self.progress.counters
        counters.max_policy_lag = max(counters.max_policy_lag, int(lags.max()))
        self.log_book.scalars["runtime/policy_lag"] = float(lags.float().mean())
        self.log_book.scalars["runtime/policy_lag_max"] = float(lags.max())

    def workers_replaced(self, count: int) -> None:
        """Account for `count` dead worker processes (actors or hogwild workers) just restarted."""
        self.progress.workers_replaced(count)

    def add_busy_time(self, role: str, seconds: float) -> None:
        """Add time spent working by the "actor" or "learner" side (for the busy fractions logged)."""
        self.log_book.busy_seconds[role] += seconds

    def set_scalar(self, name: str, value: float) -> None:
        """A runtime-specific value to write with the next TensorBoard log."""
        self.log_book.scalars[name] = value

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
        return self.progress.steady_steps_per_second(time.perf_counter())

    def should_stop(self) -> bool:
        """Refresh progress, logs and checkpoints; True once the run must end (why: `stop_reason`)."""
        now = time.perf_counter()
        self.progress.note_time(now)
        if self.dashboard is not None:
            self.dashboard.show(self.steps, self.window)
            if self.log_book.due(now, self.config.log_interval_s):
                self.log(now)
        if self.stop_rule.check(self.steps, self.counters, self.window):
            return True
        if self.checkpoints.best_check_due(now):
            self.save_if_best()
        if self.checkpoints.save_due(now):
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
