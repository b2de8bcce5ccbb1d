"""One training run from start to end, whichever runtime (`learner`, `hogwild` or `device`) it uses."""

from __future__ import annotations

import os
import signal
import sys
import time

import torch

from nalu_rl.config import Config
from nalu_rl.precision import describe_choice
from nalu_rl.runtime.device import train_device
from nalu_rl.runtime.hogwild import train_hogwild
from nalu_rl.runtime.learner import train_learner
from nalu_rl.runtime.monitor import Dashboard
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.run_checkpoints import BEST_CHECKPOINT

RUNTIMES = {"learner": train_learner, "hogwild": train_hogwild, "device": train_device}


def learner_threads(config: Config, cores: int | None = None) -> int:
    """Torch threads of the learner: --learner-threads, else every core (of `cores`, default this
    machine's) when synchronous actors wait while the learner learns or when the device runtime acts
    and learns in turn in one process, else the cores the actors leave, less one."""
    if config.learner_threads:
        return config.learner_threads
    cores = cores or os.cpu_count() or 1
    synchronous_actors = config.runtime == "learner" and config.actors > 0 and config.synchronous
    if synchronous_actors or config.runtime == "device":
        return cores
    # An oversubscribed torch thread pool crawls on busy cores: leave a core to running actors and
    # to whatever else runs beside a one-process run.
    return max(1, cores - config.actors - 1)


def train(run: TrainingRun) -> TrainingRun:
    """Train `run` with its runtime until its stop rule says so; save, log and report at the end.

    The run folder's run_status.json says "running" from the start and how the run ended at the end.

    SIGINT and SIGTERM stop the run cleanly (checkpoint saved) when called from the main thread.
    """
    config = run.config
    torch.set_num_threads(learner_threads(config))
    print(describe_choice(config.precision, run.device, config.runtime != "device"), file=sys.stderr)
    if run.start_steps:
        print(
            f"resuming {run.logdir} from step {run.start_steps:,} ({run.updates:,} updates)",
            file=sys.stderr,
        )
    run.dashboard = Dashboard(run.logdir, config.total_steps, run.steps, config.progress)
    run.log_book.status_file.running(run.steps)
    crash: BaseException | None = None
    with run.stop_on_signals():
        try:
            RUNTIMES[config.runtime](run)
        except BaseException as error:
            crash = error
            raise
        finally:
            run.close()
            if run.failure is None:
                run.save_if_best()
                run.save()
                report_stop_latency(run)
            run.log()
            run.log_book.status_file.ended(run, crash)
    restarts = run.counters.worker_restarts
    if run.best_score is not None:
        measure = "success" if run.window.reports_success else "return"
        print(
            f"{BEST_CHECKPOINT}: the best recent {measure}, {run.best_score:.3f}, at step {run.best_steps:,}",
            file=sys.stderr,
        )
    print(
        f"{run.stop_reason}; {run.steps:,} steps in {run.elapsed_seconds():.0f} s, "
        f"{final_headline(run)}, "
        f"{run.counters.bad_updates} updates skipped "
        f"(NaN/inf), {restarts} dead worker{'s' if restarts != 1 else ''} replaced; run folder {run.logdir}",
        file=sys.stderr,
    )
    if run.progress.mmer is not None:  # a POPGym env: its score (nalu_rl.mmer)
        print(run.progress.mmer.summary(), file=sys.stderr)
    return run


def final_headline(run: TrainingRun) -> str:
    """What the final line says of the recent episodes: success and return on a timing task; on
    another env the mean return (and the success where the env reports one)."""
    window = run.window
    text = f"recent return {window.mean_return():.2f} over {len(window.returns)} episodes"
    if window.is_timing_task:
        return f"recent success {window.success_rate():.3f}, return {window.mean_return():.2f}"
    if window.reports_success:
        text += f", success {window.success_rate():.3f}"
    return text


def report_stop_latency(run: TrainingRun) -> None:
    """After a signal stopped the run: say how long stopping the workers and saving took since it came."""
    received_at = run.stop_rule.signal_received_at
    if received_at is None or run.signal_received is None:
        return
    seconds = time.perf_counter() - received_at
    name = signal.Signals(run.signal_received).name
    print(f"workers stopped and checkpoint written {seconds:.2f} s after {name}", file=sys.stderr)


def final_metrics(run: TrainingRun) -> dict[str, float]:
    """The run's headline metrics for the TensorBoard hparams: steps, the recent episode return, the
    success rate where it means something (`EpisodeWindow.reports_success`) and a POPGym run's MMER."""
    metrics = {"episode_return": run.window.mean_return(), "steps": float(run.steps)}
    if run.window.reports_success:
        metrics["success_rate"] = run.window.success_rate()
    if run.progress.mmer is not None and run.progress.mmer.value is not None:
        metrics["mmer"] = run.progress.mmer.value
    return metrics


def close_dashboard(run: TrainingRun) -> None:
    """Write the run's hparams with its final metrics and close its TensorBoard writer and bar."""
    if run.dashboard is None:
        return
    run.dashboard.close(
        {key: value for key, value in run.config.to_dict().items() if key != "env"},
        final_metrics(run),
    )
    run.dashboard = None
