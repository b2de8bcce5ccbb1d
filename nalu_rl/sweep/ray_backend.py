"""The trials of a sweep as one Ray Tune experiment: an embedded local Ray or a cluster joined by
address, one Tune trial per `TrialSpec` running its train process (nalu_rl.sweep.trial), retried
from its checkpoint when that process dies, and stopped on request.

The only module of the sweep that imports Ray; the command imports it once the command line is
checked.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ray
from ray import tune

from nalu_rl.cli import CliError
from nalu_rl.errors import one_line
from nalu_rl.sweep.folder import last_exit_description
from nalu_rl.sweep.plan import source_checkout
from nalu_rl.sweep.progress import SweepProgress
from nalu_rl.sweep.trial import TrainProcess, TrialSpec

try:
    from ray.tune import CheckpointConfig, FailureConfig, RunConfig
except ImportError:  # older Ray keeps them in ray.train (only Ray 2.60 was tried)
    from ray.train import CheckpointConfig, FailureConfig, RunConfig

# A trial reports to Tune at most this often; a stop request waits for the report in progress.
REPORT_INTERVAL_S = 1.0
# Opening a TCP connection to --address gives up after this long.
ADDRESS_PROBE_TIMEOUT_S = 10.0


def _probe_address(address: str) -> None:
    """Fail fast when a HOST:PORT or ray://HOST:PORT address does not accept connections."""
    match = re.fullmatch(r"(?:ray://)?\[?([^\]]+?)\]?:(\d+)", address)
    if match is None:
        if address == "auto":
            return
        raise CliError(f"--address: expected auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    host, port = match.group(1), int(match.group(2))
    try:
        with socket.create_connection((host, port), timeout=ADDRESS_PROBE_TIMEOUT_S):
            pass
    except OSError as error:
        raise CliError(f"cannot reach the Ray cluster at {address}: {error.strerror or error}") from None


def start_ray(address: str | None, verbose: bool) -> None:
    """Start an embedded local Ray or join the cluster at `address` (CliError if unreachable)."""
    quiet = {"logging_level": logging.INFO if verbose else logging.ERROR, "log_to_driver": verbose}
    if address is None:
        source = source_checkout()
        if source:  # the trials import this checkout's nalu_rl, as the command does (Ray passes it on)
            os.environ["PYTHONPATH"] = os.pathsep.join(
                part for part in (source, os.environ.get("PYTHONPATH", "")) if part
            )
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, **quiet)
        return
    _probe_address(address)
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        message = one_line(str(error)) or type(error).__name__
        raise CliError(f"cannot join the Ray cluster at {address}: {message}") from None


def stop_ray() -> None:
    """Disconnect from Ray; an embedded local Ray stops with its processes."""
    ray.shutdown()


def largest_node() -> dict[str, float]:
    """The CPUs and GPUs of the largest live node of the Ray cluster."""
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    return {
        "CPU": max((node.get("CPU", 0.0) for node in nodes), default=0.0),
        "GPU": max((node.get("GPU", 0.0) for node in nodes), default=0.0),
    }


def _spec(trial: Any) -> TrialSpec:
    return TrialSpec.from_json(trial.config["trial"])


class TrainRunTrial(tune.Trainable):
    """A Tune trial that runs one `nalu_rl.train` process and reports its progress.

    A class trainable rather than a function: Tune calls `cleanup` in the actor's main thread when it
    stops a trial, so the child is stopped (and its checkpoint saved) before the actor goes.
    """

    def setup(self, config: dict[str, Any]) -> None:
        self.train = TrainProcess(TrialSpec.from_json(config["trial"]))
        self.setup_error: str | None = None
        try:
            self.train.launch()
        except CliError as error:
            self.setup_error = str(error)

    def step(self) -> dict[str, Any]:
        if self.setup_error is not None:
            return {
                "steps": 0,
                "success_rate": math.nan,
                "state": "failed",
                "error": self.setup_error,
                "done": True,
            }
        return self.train.watch(REPORT_INTERVAL_S)

    def cleanup(self) -> None:
        self.train.stop()

    # The trial's checkpoint is train's checkpoint.pt in its run folder; Tune keeps none.
    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, Any]:
        return {}

    def load_checkpoint(self, checkpoint: Any) -> None:
        pass


class ProgressCallback(tune.Callback):
    """Feeds the sweep's progress line from Tune's trial events."""

    def __init__(self, progress: SweepProgress) -> None:
        self.progress = progress

    def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.progress.update(_spec(trial).name, state="running")

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        self.progress.update(_spec(trial).name, result=result)

    def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        spec = _spec(trial)
        self.progress.print_line(f"retrying {spec.name}: {last_exit_description(spec.folder)}")
        self.progress.update(spec.name, state="running")

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        spec = _spec(trial)
        self.progress.print_line(f"giving up on {spec.name}: {last_exit_description(spec.folder)}")
        self.progress.update(spec.name, state="failed")


class StopOnRequest(tune.Stopper):
    """Stops every trial once `stop_requested()` says so (a signal reached the command)."""

    def __init__(self, stop_requested: Callable[[], bool]) -> None:
        self.stop_requested = stop_requested

    def __call__(self, trial_id: str, result: dict) -> bool:
        return False

    def stop_all(self) -> bool:
        return self.stop_requested()


def _quiet_tune() -> None:
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"  # the legacy reporter is silent at verbose=0, the new one is not
    for logger_name in ("ray", "ray.tune", "ray.train", "ray.air"):
        logging.getLogger(logger_name).setLevel(logging.CRITICAL)


def run_trials(
    folder: Path,
    args: argparse.Namespace,
    specs: Sequence[TrialSpec],
    progress: SweepProgress,
    cpus: int,
    gpus: float,
    stop_requested: Callable[[], bool],
    trainable: type[TrainRunTrial] = TrainRunTrial,
    shared_config: dict[str, Any] | None = None,
) -> None:
    """Run the trials of `specs` as one Tune experiment (its records in `folder`/.ray), until they end
    or a stop is requested.

    `trainable` runs each trial (a `TrainRunTrial`, or a subclass that does more once train has
    finished); `shared_config` is added to every trial's config beside its "trial" spec.
    """
    os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"  # the command passes signals on to the trials
    os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "1"
    if not args.verbose:
        _quiet_tune()

    def trial_name(trial: Any) -> str:
        return _spec(trial).name

    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": cpus, "gpu": gpus}),
        param_space={**(shared_config or {}), "trial": tune.grid_search([spec.to_json() for spec in specs])},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=args.max_concurrent,
            trial_name_creator=trial_name,
            trial_dirname_creator=trial_name,
        ),
        run_config=RunConfig(
            name=time.strftime("%Y%m%d-%H%M%S"),
            storage_path=str(folder / ".ray"),
            failure_config=FailureConfig(max_failures=args.max_failures),
            checkpoint_config=CheckpointConfig(checkpoint_frequency=0, checkpoint_at_end=False),
            callbacks=[ProgressCallback(progress)],
            stop=StopOnRequest(stop_requested),
            verbose=2 if args.verbose else 0,
        ),
    )
    tuner.fit()
