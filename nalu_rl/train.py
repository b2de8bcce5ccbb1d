"""`python -m nalu_rl.train`: train an agent on TimeTrack, checkpoint it, evaluate it across delays."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.checkpoint import build_model, load_checkpoint, save_checkpoint
from nalu_rl.cli import CliError, run_cli
from nalu_rl.config import Config, parse_config, validate
from nalu_rl.monitor import Dashboard, EpisodeWindow
from nalu_rl.rollout import RolloutBatch

# Worker processes that may die in a row, with no step delivered in between, before the run gives up.
MAX_RESTARTS_WITHOUT_PROGRESS = 10

# Options that define the model or the task; a resumed run keeps the saved ones.
FIXED_ON_RESUME = ("agent", "obs", "size", "delay_range", "stimulus", "reward_mode", "seed", "envs_per_actor")


class TrainingRun:
    """The state of one training run shared by the runtimes: model, optimizer, counts, stopping rule."""

    def __init__(self, config: Config, logdir: Path, resume_payload: dict[str, Any] | None = None) -> None:
        from envs import TimeTrackEnv

        self.config = config
        self.logdir = logdir
        self.device = torch.device(config.resolved_device())
        # Seeded before the model is built, so that --seed fixes its initial weights too.
        torch.manual_seed(config.seed)
        # A resumed run keeps the wiring it was started with, even if the registry has moved since.
        env = TimeTrackEnv(**config.env_kwargs())
        try:
            self.model = build_model(config.agent, env, (resume_payload or {}).get("wiring"))
        except (AttributeError, TypeError, ValueError) as error:
            raise CliError(f"cannot resume from this checkpoint: its wiring is invalid: {error}") from None
        self.model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate)
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
        if resume_payload is not None:
            self._restore(resume_payload)
        self.window = EpisodeWindow(
            config.success_window, config.delay_range, config.size, config.target_fraction
        )
        self.counters = {
            "bad_updates": 0,
            "bad_updates_in_a_row": 0,
            "actor_restarts": 0,
            "restarts_without_progress": 0,
            "episodes": 0,
            "max_policy_lag": 0,
        }
        self.steps_at_last_restart = -1
        self.timing = {"actor_seconds": 0.0, "learner_seconds": 0.0}
        self.scalars: dict[str, float] = {}
        self.last_metrics: dict[str, float] = {}
        self.on_close: list[Callable[[], None]] = []
        self.stop_reason: str | None = None
        self.failure: str | None = None
        self.signal_received: int | None = None
        self.dashboard: Dashboard | None = None
        self.checkpoint_lock: Any = contextlib.nullcontext()
        self.started = time.perf_counter()
        self.first_batch_time: float | None = None
        self.first_batch_steps = 0
        self.last_log = self.last_checkpoint = self.started
        self.last_log_steps = self.steps
        self.last_timing = dict(self.timing)

    # -- resume ----------------------------------------------------------------------------
    def _restore(self, payload: dict[str, Any]) -> None:
        try:
            self.model.load_state_dict(payload["model"])
            self.optimizer.load_state_dict(payload["optimizer"])
            # Adam's saved state carries the old learning rate; a --learning-rate given on resume wins.
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.learning_rate
            self.steps = self.start_steps = int(payload["steps"])
            self.updates = int(payload["updates"])
            opened_at = int(payload.get("regularizer_opened_at", 0))
            if opened_at >= 0 or not self.config.regularizer_gate_success:
                self.regularizer_opened_at = max(opened_at, 0)
            self.elapsed_before = float(payload.get("elapsed_seconds", 0.0))
            rng = payload["rng"]
            torch.set_rng_state(rng["torch"])
            self.rng.bit_generator.state = json.loads(rng["numpy"])
            state = json.loads(rng["python"])
            random.setstate((state[0], tuple(state[1]), state[2]))
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CliError(f"cannot resume from this checkpoint: {type(error).__name__}: {error}") from None

    def checkpoint_payload(self) -> dict[str, Any]:
        """Everything needed to resume, loadable with weights_only=True."""
        python_state = random.getstate()
        return {
            "config": self.config.to_dict(),
            "model": {key: value.detach().cpu() for key, value in self.model.state_dict().items()},
            "wiring": self.model.wiring.to_dict(),
            "optimizer": self.optimizer.state_dict(),
            "steps": self.steps,
            "updates": self.updates,
            "regularizer_opened_at": -1 if self.regularizer_opened_at is None else self.regularizer_opened_at,
            "elapsed_seconds": self.elapsed_seconds(),
            "rng": {
                "torch": torch.get_rng_state(),
                "numpy": json.dumps(self.rng.bit_generator.state),
                "python": json.dumps([python_state[0], list(python_state[1]), python_state[2]]),
            },
        }

    def save(self) -> None:
        """Write checkpoint.pt atomically."""
        with self.checkpoint_lock:
            payload = self.checkpoint_payload()
        save_checkpoint(self.logdir / "checkpoint.pt", payload)
        self.last_checkpoint = time.perf_counter()

    # -- accounting --------------------------------------------------------------------------
    def elapsed_seconds(self) -> float:
        """Training wall time, resumed runs included."""
        return self.elapsed_before + time.perf_counter() - self.started

    def next_seed(self) -> int:
        """A fresh seed for an actor's environments (drawn from the run's RNG, so resumes continue it)."""
        return int(self.rng.integers(0, 2**31 - 1))

    def record_batch(self, batch: RolloutBatch) -> None:
        """Count the steps of a batch and add the episodes that ended in it to the window."""
        self.steps += batch.num_steps
        ended = batch.outcome >= 0
        if ended.any():
            self.record_episodes(
                batch.delay[ended].numpy(),
                batch.outcome[ended].numpy() == 0,
                batch.episode_return[ended].numpy(),
            )

    def record_episodes(self, delays: np.ndarray, successes: np.ndarray, returns: np.ndarray) -> None:
        """Add finished episodes (success is outcome "success") to the window."""
        self.window.add(delays, successes, returns)
        self.counters["episodes"] += len(delays)

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

    def good_update(self, metrics: dict[str, float]) -> None:
        """Account for an applied update."""
        self.updates += 1
        self.counters["bad_updates_in_a_row"] = 0
        self.last_metrics = metrics

    def bad_update(self) -> None:
        """Account for an update skipped because its loss or gradient was not finite."""
        self.counters["bad_updates"] += 1
        self.counters["bad_updates_in_a_row"] += 1

    def workers_replaced(self, count: int) -> None:
        """Account for `count` dead actor (or hogwild worker) processes that were just restarted."""
        if not count:
            return
        self.counters["actor_restarts"] += count
        if self.steps == self.steps_at_last_restart:
            self.counters["restarts_without_progress"] += count
        else:
            self.counters["restarts_without_progress"] = count
        self.steps_at_last_restart = self.steps

    # -- the loop's heartbeat ----------------------------------------------------------------
    def steady_steps_per_second(self) -> float:
        """SPS from the first trained batch to now (process start-up and first weights excluded)."""
        if self.first_batch_time is None:
            return 0.0
        elapsed = time.perf_counter() - self.first_batch_time
        return (self.steps - self.first_batch_steps) / elapsed if elapsed > 0 else 0.0

    def should_stop(self) -> bool:
        """Refresh progress, logs and checkpoints; True once the run must end (and why, in stop_reason)."""
        now = time.perf_counter()
        if self.first_batch_time is None and self.steps > self.start_steps:
            self.first_batch_time, self.first_batch_steps = now, self.steps
        if self.dashboard is not None:
            self.dashboard.show(self.steps, self.window.success_rate(), self.window.full)
            if now - self.last_log >= self.config.log_interval_s:
                self.log(now)
        if self.stop_reason is None:
            if self.signal_received is not None:
                self.stop_reason = f"stopped by {signal.Signals(self.signal_received).name}"
            elif self.counters["bad_updates_in_a_row"] >= self.config.max_bad_updates:
                self.failure = (
                    f"{self.counters['bad_updates_in_a_row']} updates in a row had a NaN/inf loss or "
                    f"gradient; stopped, the last good checkpoint is {self.logdir / 'checkpoint.pt'}"
                )
                self.stop_reason = "failed"
            elif self.counters["restarts_without_progress"] >= MAX_RESTARTS_WITHOUT_PROGRESS:
                self.failure = (
                    f"{self.counters['restarts_without_progress']} worker processes died in a row without "
                    "delivering a step (their errors are above); stopped"
                )
                self.stop_reason = "failed"
            elif self.steps >= self.config.total_steps:
                self.stop_reason = f"step budget of {self.config.total_steps:,} spent"
            elif self.window.target_reached():
                self.stop_reason = (
                    f"target reached: success {self.window.success_rate():.3f} >= "
                    f"{self.window.target_success_rate:.3f} over the last {self.window.capacity} episodes"
                )
        if self.stop_reason is not None:
            return True
        if now - self.last_checkpoint >= self.config.checkpoint_interval_s:
            self.save()
        return False

    def log(self, now: float | None = None) -> None:
        """Write the current scalars to TensorBoard."""
        now = time.perf_counter() if now is None else now
        interval = max(now - self.last_log, 1e-9)
        scalars = dict(self.last_metrics)
        scalars.update(self.scalars)
        scalars["charts/SPS"] = self.dashboard.steps_per_second(self.steps)
        scalars["charts/SPS_recent"] = (self.steps - self.last_log_steps) / interval
        scalars["charts/success_rate"] = self.window.success_rate()
        scalars["charts/episode_return"] = self.window.mean_return()
        scalars["charts/episodes"] = self.counters["episodes"]
        for delay, rate in self.window.success_rate_by_delay().items():
            scalars[f"success_by_delay/T{delay:02d}"] = rate
        scalars["runtime/nan_skipped_updates"] = self.counters["bad_updates"]
        scalars["runtime/actor_restarts"] = self.counters["actor_restarts"]
        scalars["runtime/updates"] = self.updates
        scalars["runtime/learner_busy"] = (
            self.timing["learner_seconds"] - self.last_timing["learner_seconds"]
        ) / interval
        if self.config.actors == 0 or self.config.runtime == "hogwild":
            actor_seconds = self.timing["actor_seconds"] - self.last_timing["actor_seconds"]
            scalars["runtime/actor_busy"] = actor_seconds / interval / max(1, self.config.actors)
        self.dashboard.log(self.steps, scalars)
        self.last_log, self.last_log_steps, self.last_timing = now, self.steps, dict(self.timing)

    def close(self) -> None:
        """Stop whatever the runtime left running."""
        for close in list(self.on_close):
            close()


def learner_threads(config: Config) -> int:
    """Torch threads of the learner: --learner-threads, else every core when synchronous actors
    wait while the learner learns, else the cores the actors leave, less one."""
    if config.learner_threads:
        return config.learner_threads
    cores = os.cpu_count() or 1
    if config.runtime == "learner" and config.actors > 0 and config.synchronous:
        return cores
    # An oversubscribed torch thread pool crawls on busy cores: leave a core to running actors and
    # to whatever else runs beside a one-process run.
    return max(1, cores - config.actors - 1)


def _prepare(argv: Sequence[str] | None) -> tuple[Config, Path, dict[str, Any] | None]:
    config, given = parse_config(argv)
    payload = None
    if config.resume is not None:
        payload = load_checkpoint(Path(config.resume) / "checkpoint.pt")
        saved = Config.from_dict(payload["config"])
        changed = [
            name
            for name in FIXED_ON_RESUME
            if name in given and getattr(config, name) != getattr(saved, name)
        ]
        if changed:
            raise CliError(
                f"--resume keeps the run's {', '.join('--' + n.replace('_', '-') for n in changed)}"
            )
        overrides = {name: getattr(config, name) for name in given if name not in FIXED_ON_RESUME}
        config = Config.from_dict(
            {**saved.to_dict(), **overrides, "resume": config.resume, "logdir": config.resume}
        )
    validate(config)
    if config.logdir is None:
        config.logdir = config.default_logdir()
    logdir = Path(config.logdir)
    if config.resume is None and (logdir / "checkpoint.pt").exists():
        raise CliError(
            f"run folder {logdir} already holds a checkpoint; continue it with --resume {logdir} "
            "or choose another --logdir"
        )
    try:
        logdir.mkdir(parents=True, exist_ok=True)
        probe = logdir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise CliError(f"cannot write to log folder {logdir}: {error.strerror or error}") from None
    return config, logdir, payload


def main(argv: Sequence[str] | None = None) -> int:
    """Train as the command line says, then evaluate; return the exit code."""
    run = run_training(argv)
    if run.failure is not None:
        print(f"error: {run.failure}", file=sys.stderr)
        return 1
    if run.signal_received is None:
        evaluate(run)
    return 0


def run_training(argv: Sequence[str] | None = None) -> TrainingRun:
    """Train as the command line says (no final evaluation) and return the finished run."""
    config, logdir, payload = _prepare(argv)
    config.save_json(logdir / "config.json")
    run = TrainingRun(config, logdir, payload)
    torch.set_num_threads(learner_threads(config))

    def request_stop(signum: int, _frame: Any) -> None:
        run.signal_received = signum

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    run.dashboard = Dashboard(logdir, config.total_steps, run.steps, config.progress)
    try:
        if config.runtime == "hogwild":
            from nalu_rl.hogwild import train_hogwild

            train_hogwild(run)
        else:
            from nalu_rl.learner import train_learner

            train_learner(run)
    finally:
        run.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if run.failure is None:
            run.save()
        run.log()
        run.dashboard.close(
            {key: value for key, value in config.to_dict().items() if key != "env"},
            {"success_rate": run.window.success_rate(), "steps": float(run.steps)},
        )
    restarts = run.counters["actor_restarts"]
    print(
        f"{run.stop_reason}; {run.steps:,} steps in {run.elapsed_seconds():.0f} s, "
        f"recent success {run.window.success_rate():.3f}, {run.counters['bad_updates']} updates skipped "
        f"(NaN/inf), {restarts} dead actor{'s' if restarts != 1 else ''} replaced; run folder {logdir}",
        file=sys.stderr,
    )
    return run


def evaluate(run: TrainingRun) -> Path | None:
    """Evaluate the trained model across delays into the run folder; None when skipped."""
    config = run.config
    if config.eval_episodes == 0:
        return None
    try:
        from nalu_rl.evaluate import evaluate_and_write
    except ImportError:
        print("evaluation skipped: nalu_rl.evaluate.evaluate_and_write is not available", file=sys.stderr)
        return None
    run.model.eval()
    csv_path = evaluate_and_write(
        run.model,
        config.to_dict(),
        run.logdir,
        delays=range(1, config.eval_max_delay + 1),
        episodes=config.eval_episodes,
        seed=config.seed,
        device=str(run.device),
    )
    print(f"evaluation written to {csv_path}", file=sys.stderr)
    return csv_path


if __name__ == "__main__":
    run_cli(main)
