"""`python -m nalu_rl.sweep`: train agents x seeds as one Ray Tune experiment, ending in the figure.

Each trial is one `python -m nalu_rl.train` run, started as a child process of the trial (its
own process group) in its own run folder, ROOT/NAME/<agent>-<obs>-seed<k>/, so every trial
folder is an ordinary run folder (config.json, checkpoint.pt, TensorBoard events, the
evaluation CSV and PNG). A trial whose train process dies is retried with `--resume` on its
folder, so its step count continues from the last checkpoint. Ctrl-C stops every trial with
SIGINT (train then saves its checkpoint), and `--resume` continues the sweep, skipping the
trials that finished. At the end the trials' evaluation CSVs become one figure and one Markdown
table in the sweep folder (nalu_rl.plot).

Ray is imported only when the command runs, so this module imports without it. It is a command
module: library code does not import it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nalu_rl
from nalu_rl.cli import CliError, run_cli
from nalu_rl.config import Config, parse_config, validate
from nalu_rl.runtime.training import learner_threads

# Train options that the sweep sets for each trial; after "--" they are refused.
SWEEP_OWNED_OPTIONS = ("agent", "seed", "logdir", "resume", "obs")

# Files the sweep keeps beside train's own in a trial folder.
TRIAL_STATUS_FILE = "sweep_trial.json"  # written once the trial's train run has ended for good
TRIAL_HISTORY_FILE = "sweep_history.jsonl"  # one line per launch and per exit of a train process
TRAIN_LOG_FILE = "train.log"  # the train process's stdout and stderr
TRAIN_PID_FILE = "train.pid"  # "<host> <pid>" of the running train process
SWEEP_FILE = "sweep.json"  # the sweep's grid and options, read back by --resume

# A trial reports to Tune at most this often; a stop request waits for the report in progress.
REPORT_INTERVAL_S = 1.0
# After SIGINT a train process has this long to save its checkpoint and exit before SIGKILL.
STOP_GRACE_S = 6.0
# The terminal gets a progress line at least this often while nothing changes.
PROGRESS_LINE_INTERVAL_S = 30.0
# Opening a TCP connection to --address gives up after this long.
ADDRESS_PROBE_TIMEOUT_S = 10.0

# The last line of a train run: "<stop reason>; <steps> steps in <seconds> s, ...".
TRAIN_SUMMARY_LINE = re.compile(r"^(?P<reason>[^;\n]+); (?P<steps>[\d,]+) steps in ", re.MULTILINE)

# The first program of a trial's child. Ray's processes block SIGINT, and a blocked or ignored
# signal stays so across exec: unblock it, so that train can save its checkpoint on SIGINT. Then,
# on Linux, have the kernel send SIGINT to train when the trial's process dies (no orphan is left),
# and become `python -m nalu_rl.train`.
_LAUNCH_TRAIN = """\
import ctypes, os, signal, sys
for stop_signal in (signal.SIGINT, signal.SIGTERM):
    signal.signal(stop_signal, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):  # the trial died before the line above
        sys.exit(1)
os.execv(sys.executable, [sys.executable, "-m", "nalu_rl.train", *sys.argv[2:]])
"""


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a sweep: which run it trains, where, and with which train options."""

    agent: str
    seed: int
    obs: str
    folder: str  # absolute path of the run folder
    train_options: tuple[str, ...]  # the options after "--", as given
    learner_threads: int  # 0: the options set --learner-threads themselves
    python_path: str  # prepended to PYTHONPATH of the train process ("" for none)

    @property
    def name(self) -> str:
        return Path(self.folder).name

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> TrialSpec:
        values = json.loads(text)
        values["train_options"] = tuple(values["train_options"])
        return cls(**values)


def trial_folder_name(agent: str, obs: str, seed: int) -> str:
    """The run folder name of one trial inside the sweep folder."""
    return f"{agent}-{obs}-seed{seed}"


def parse_seeds(tokens: Sequence[str]) -> list[int]:
    """Seeds from tokens such as "0-4", "0,2,5" or "0-2,7" (several tokens add up); in order, no repeats."""
    seeds: list[int] = []
    for token in tokens:
        for part in token.split(","):
            match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if match is None or (match.group(2) is not None and int(match.group(2)) < int(match.group(1))):
                raise CliError(f"--seeds: bad seed list {token!r}; expected e.g. 0-4, 0,2,5 or 0-2,7")
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) is not None else first
            seeds.extend(seed for seed in range(first, last + 1) if seed not in seeds)
    if not seeds:
        raise CliError("--seeds: no seed given")
    return seeds


def check_train_options(
    train_options: Sequence[str], agents: Sequence[str], obs: str, on_cluster: bool
) -> Config:
    """Parse and validate the train options as `nalu_rl.train` would, for each agent, without training.

    Return the config of the first agent (the options shared by all trials). On a cluster the
    CUDA check is left to the trials, whose nodes may have the GPUs this one lacks.
    """
    from nalu_rl.agents import agent_names

    unknown = [agent for agent in agents if agent not in agent_names()]
    if unknown:
        raise CliError(f"--agents: unknown agent {unknown[0]!r}; choose from {', '.join(agent_names())}")
    try:
        owned = [name for name in SWEEP_OWNED_OPTIONS if name in parse_config(train_options)[1]]
    except ValueError as error:  # InputError and CliError among them
        raise CliError(f"train option rejected: {error}") from None
    if owned == ["obs"]:
        raise CliError("--obs is an option of the sweep: give it before --")
    if owned:
        flag = "--" + owned[0].replace("_", "-")
        raise CliError(f"{flag} is set by the sweep for each trial; remove it from the train options")
    configs = []
    for agent in agents:
        try:
            config, _ = parse_config(["--agent", agent, "--obs", obs, *train_options])
            if on_cluster and config.device == "cuda":
                validate(dataclasses.replace(config, device="auto"))
            else:
                validate(config)
        except ValueError as error:  # InputError and CliError among them
            raise CliError(f"train option rejected: {error}") from None
        configs.append(config)
    return configs[0]


def trial_cpus(config: Config) -> int:
    """CPUs one trial uses: its actor (or hogwild worker) processes and the learner."""
    return config.actors + 1


def train_arguments(spec: TrialSpec, resume: bool) -> list[str]:
    """The `nalu_rl.train` command-line arguments of a trial: a fresh run, or `--resume` of its folder."""
    if resume:
        head = ["--resume", spec.folder]
    else:
        head = ["--agent", spec.agent, "--obs", spec.obs, "--seed", str(spec.seed), "--logdir", spec.folder]
    head.append("--no-progress")  # the output goes to train.log
    if spec.learner_threads:
        head += ["--learner-threads", str(spec.learner_threads)]
    return head + list(spec.train_options)


def read_trial_status(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The status a trial wrote when its train run ended for good, or None."""
    path = Path(folder) / TRIAL_STATUS_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


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


def checkpoint_steps(folder: str | os.PathLike) -> int | None:
    """Environment steps of the checkpoint in a run folder, or None without a readable one."""
    path = Path(folder) / "checkpoint.pt"
    if not path.exists():
        return None
    try:
        from nalu_rl.checkpoint import load_checkpoint

        return int(load_checkpoint(path)["steps"])
    except (CliError, KeyError, TypeError, ValueError):
        return None


def _process_matches(pid: int, folder: str) -> bool:
    """Whether `pid` is alive and is a train process of `folder` (not a reused pid)."""
    try:
        command_line = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc: alive is all we can tell
    return "nalu_rl.train" in command_line and folder in command_line


def _wait_for_exit(pid: int, folder: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _process_matches(pid, folder):
            return True
        time.sleep(0.1)
    return not _process_matches(pid, folder)


def stop_leftover_train(folder: str | os.PathLike, grace_s: float = STOP_GRACE_S) -> bool:
    """Stop a train process that its pid file says still runs on this host for `folder`
    (SIGINT to its process group, SIGKILL after `grace_s`); True if there was one."""
    folder = str(folder)
    try:
        host, pid_text = (Path(folder) / TRAIN_PID_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    if host != socket.gethostname() or not _process_matches(pid, folder):
        return False
    for sig in (signal.SIGINT, signal.SIGKILL):
        with contextlib.suppress(OSError):
            os.killpg(pid, sig)
        if _wait_for_exit(pid, folder, grace_s):
            break
    with contextlib.suppress(OSError):
        (Path(folder) / TRAIN_PID_FILE).unlink()
    return True


class TrainingProgress:
    """Steps and recent training-range success of a run, read from its TensorBoard events."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = str(folder)
        self.accumulator: Any = None
        self.steps = 0
        self.success_rate = math.nan

    def refresh(self) -> None:
        """Read the events written since the last refresh."""
        try:
            if self.accumulator is None:
                from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

                self.accumulator = EventAccumulator(self.folder, size_guidance={"scalars": 1})
            self.accumulator.Reload()
            if "charts/success_rate" in self.accumulator.Tags().get("scalars", []):
                last = self.accumulator.Scalars("charts/success_rate")[-1]
                self.steps, self.success_rate = int(last.step), float(last.value)
        except Exception:  # progress is a nicety: a half-written event file must not fail the trial
            pass


class TrainProcess:
    """The `python -m nalu_rl.train` child of one trial: launched, watched, and stopped."""

    def __init__(self, spec: TrialSpec) -> None:
        self.spec = spec
        self.folder = Path(spec.folder)
        self.process: subprocess.Popen | None = None
        self.log_file: Any = None
        self.log_offset = 0
        self.progress = TrainingProgress(spec.folder)
        self.resumed_from_steps: int | None = None
        self.final_metrics: dict[str, Any] | None = None

    def _history(self, record: dict[str, Any]) -> None:
        with open(self.folder / TRIAL_HISTORY_FILE, "a") as file:
            file.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")

    def launch(self) -> None:
        """Start train in the trial folder: `--resume` when it holds a checkpoint, a fresh run otherwise."""
        sweep_folder = self.folder.parent
        if not sweep_folder.is_dir():
            raise CliError(
                f"the sweep folder {sweep_folder} is not visible on node {socket.gethostname()}; "
                "a cluster needs it on a shared filesystem (docs/SCALING.md)"
            )
        stop_leftover_train(self.folder)  # a train process of a trial that died may still be saving
        self.folder.mkdir(exist_ok=True)
        (self.folder / TRIAL_STATUS_FILE).unlink(missing_ok=True)
        resume = (self.folder / "checkpoint.pt").exists()  # an unreadable one is train's to report
        self.resumed_from_steps = checkpoint_steps(self.folder) if resume else None
        arguments = train_arguments(self.spec, resume=resume)
        environment = dict(os.environ)
        if self.spec.python_path:
            environment["PYTHONPATH"] = os.pathsep.join(
                part for part in (self.spec.python_path, environment.get("PYTHONPATH", "")) if part
            )
        self.log_file = open(self.folder / TRAIN_LOG_FILE, "a")  # noqa: SIM115 (closed in close_log)
        self.log_file.write(f"== sweep: python -m nalu_rl.train {' '.join(arguments)}\n")
        self.log_file.flush()
        self.log_offset = self.log_file.tell()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH_TRAIN, str(os.getpid()), *arguments],
            stdin=subprocess.DEVNULL,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            cwd=self.folder,
            env=environment,
            start_new_session=True,  # its own process group: a terminal's Ctrl-C is the sweep's to pass on
        )
        (self.folder / TRAIN_PID_FILE).write_text(f"{socket.gethostname()} {self.process.pid}\n")
        self._history(
            {
                "event": "launch",
                "pid": self.process.pid,
                "host": socket.gethostname(),
                "resumed_from_steps": self.resumed_from_steps,
            }
        )

    def _output_since_launch(self) -> str:
        try:
            with open(self.folder / TRAIN_LOG_FILE, errors="replace") as file:
                file.seek(self.log_offset)
                return file.read()
        except OSError:
            return ""

    def watch(self, seconds: float) -> dict[str, Any]:
        """Wait up to `seconds` for train to end; return the trial's metrics for Tune.

        A train run that ended for good (finished, or refused its options with exit code 2) gives
        `done`; one that died or failed otherwise raises RuntimeError, so Tune retries the trial.
        """
        assert self.process is not None
        if self.final_metrics is not None:  # Tune may ask once more after `done`
            return self.final_metrics
        deadline = time.monotonic() + seconds
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        self.progress.refresh()
        metrics: dict[str, Any] = {
            "steps": self.progress.steps,
            "success_rate": self.progress.success_rate,
            "state": "running",
        }
        exit_code = self.process.poll()
        if exit_code is None:
            return metrics
        with contextlib.suppress(OSError):  # actor processes of a train process that was killed
            os.killpg(self.process.pid, signal.SIGKILL)
        self._forget_pid()
        output = self._output_since_launch()
        summaries = list(TRAIN_SUMMARY_LINE.finditer(output))
        errors = [line for line in output.splitlines() if line.startswith("error: ")]
        stop_reason = summaries[-1]["reason"] if summaries else None
        steps = checkpoint_steps(self.folder)
        if steps is None and summaries:
            steps = int(summaries[-1]["steps"].replace(",", ""))
        self._history(
            {
                "event": "exit",
                "exit_code": exit_code,
                "stop_reason": stop_reason,
                "steps": steps,
                "error": errors[-1] if errors else None,
            }
        )
        if exit_code == 0 and not (stop_reason or "").startswith("stopped by"):
            status = {"status": "finished", "stop_reason": stop_reason, "steps": steps}
        elif exit_code == 2:
            status = {"status": "failed", "error": errors[-1] if errors else "train exited with code 2"}
        elif exit_code == 0:
            raise RuntimeError(f"train was stopped from outside the sweep ({stop_reason}); resuming")
        elif exit_code < 0:
            raise RuntimeError(f"train was killed by {signal.Signals(-exit_code).name}")
        else:
            detail = errors[-1] if errors else (output.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"train exited with code {exit_code}: {detail}")
        (self.folder / TRIAL_STATUS_FILE).write_text(json.dumps(status) + "\n")
        self.close_log()
        if steps is not None:
            metrics["steps"] = steps
        self.final_metrics = {
            **metrics,
            "state": status["status"],
            "error": status.get("error", ""),
            "done": True,
        }
        return self.final_metrics

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop train if it runs: SIGINT to its process group (train saves its checkpoint), then
        SIGKILL after `grace_s`."""
        if self.process is not None and self.process.poll() is None:
            for sig in (signal.SIGINT, signal.SIGKILL):
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, sig)
                try:
                    self.process.wait(timeout=grace_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
            self._history({"event": "stopped by the sweep", "exit_code": self.process.poll()})
            self._forget_pid()
        self.close_log()

    def _forget_pid(self) -> None:
        with contextlib.suppress(OSError):
            (self.folder / TRAIN_PID_FILE).unlink()

    def close_log(self) -> None:
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None


def _make_trainable(tune: Any) -> type:
    """The Tune trainable of a sweep: one train child process per trial (needs `ray.tune`)."""

    class TrainRunTrial(tune.Trainable):
        """A Tune trial that runs one `nalu_rl.train` process and reports its progress.

        A class trainable rather than a function: Tune calls `cleanup` in the actor's main thread
        when it stops a trial, so the child is stopped (and its checkpoint saved) before the actor goes.
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

    return TrainRunTrial


class SweepProgress:
    """What the terminal shows: one line per change (trials finished / running / failed, the best
    recent training-range success), at least every PROGRESS_LINE_INTERVAL_S while trials run."""

    def __init__(
        self, name: str, specs: Sequence[TrialSpec], print_line: Callable[[str], None] = print
    ) -> None:
        self.name = name
        self.print_line = print_line
        self.state = {spec.name: "waiting" for spec in specs}
        self.success = {spec.name: math.nan for spec in specs}
        self.steps = {spec.name: 0 for spec in specs}
        self.errors: dict[str, str] = {}
        self.last_line_time = 0.0
        for spec in specs:
            status = read_trial_status(spec.folder)
            if status is not None and status.get("status") == "finished":
                self.state[spec.name] = "finished"
                self.steps[spec.name] = int(status.get("steps") or 0)

    def line(self) -> str:
        """The progress line of the sweep as it stands."""
        counts = {
            state: list(self.state.values()).count(state) for state in ("finished", "running", "failed")
        }
        waiting = len(self.state) - sum(counts.values())
        known = {name: rate for name, rate in self.success.items() if not math.isnan(rate)}
        best = ""
        if known:
            leader = max(known, key=known.__getitem__)
            best = f"; best recent training-range success {known[leader]:.3f} ({leader})"
        total_steps = sum(self.steps.values())
        return (
            f"[{time.strftime('%H:%M:%S')}] {self.name}: {counts['finished']}/{len(self.state)} finished, "
            f"{counts['running']} running, {counts['failed']} failed, {waiting} waiting{best}; "
            f"{total_steps / 1e6:.2f}M steps in all"
        )

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_line_time >= PROGRESS_LINE_INTERVAL_S:
            self.print_line(self.line())
            self.last_line_time = now

    def update(self, name: str, state: str | None = None, result: dict[str, Any] | None = None) -> None:
        """Record a trial's new state or result and print a line if something changed."""
        changed = state is not None and state != self.state.get(name)
        if state is not None:
            self.state[name] = state
        if result is not None:
            if isinstance(result.get("success_rate"), int | float):
                self.success[name] = float(result["success_rate"])
            if isinstance(result.get("steps"), int | float):
                self.steps[name] = int(result["steps"])
            if result.get("error"):
                self.errors[name] = str(result["error"])
            if result.get("state") in ("finished", "failed") and result["state"] != self.state[name]:
                self.state[name], changed = result["state"], True
        self.show(force=changed)


def _make_callback(tune: Any, progress: SweepProgress) -> Any:
    """A Tune callback that feeds `progress` (needs `ray.tune`)."""

    def trial_name(trial: Any) -> str:
        return TrialSpec.from_json(trial.config["trial"]).name

    def how_it_ended(trial: Any) -> str:
        return last_exit_description(TrialSpec.from_json(trial.config["trial"]).folder)

    class ProgressCallback(tune.Callback):
        def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            progress.update(trial_name(trial), state="running")

        def on_trial_result(
            self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
        ) -> None:
            progress.update(trial_name(trial), result=result)

        def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            progress.print_line(f"retrying {trial_name(trial)}: {how_it_ended(trial)}")
            progress.update(trial_name(trial), state="running")

        def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            progress.print_line(f"giving up on {trial_name(trial)}: {how_it_ended(trial)}")
            progress.update(trial_name(trial), state="failed")

    return ProgressCallback()


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


def _make_stopper(tune: Any, stop_requested: Callable[[], bool]) -> Any:
    class StopOnSignal(tune.Stopper):
        def __call__(self, trial_id: str, result: dict) -> bool:
            return False

        def stop_all(self) -> bool:
            return stop_requested()

    return StopOnSignal()


# -- the command line ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.sweep` (the train options follow "--")."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.sweep",
        usage="python -m nalu_rl.sweep --agents AGENT [AGENT ...] --seeds SEEDS [options] [-- TRAIN OPTIONS]",
        description="Train every agent x seed as one nalu_rl.train run each, on Ray Tune (an embedded "
        "local Ray, or a cluster with --address), retrying trials whose process dies from their "
        "checkpoint, and end with the combined success-by-delay figure and table. Options after "
        '"--" go to every nalu_rl.train run (python -m nalu_rl.train --help lists them), e.g. '
        "-- --total-steps 6000000 --target-fraction 2.",
    )
    parser.add_argument(
        "--agents", nargs="+", metavar="AGENT", help="agents to train (see nalu_rl.train --agent)"
    )
    parser.add_argument(
        "--seeds", nargs="+", metavar="SEEDS", help="seeds: ranges and lists, e.g. 0-4, 0,2,5, 0-2,7"
    )
    parser.add_argument("--obs", choices=("pixels", "symbolic"), help="observation mode (default pixels)")
    parser.add_argument("--name", help="sweep name: the sweep folder is ROOT/NAME (default <obs>-<time>)")
    parser.add_argument("--root", default=str(Path("runs") / "sweeps"), help="folder of the sweep folders")
    parser.add_argument(
        "--address",
        help="join a running Ray cluster: auto (this machine's), HOST:PORT, or ray://HOST:10001 "
        "(default: start a local Ray on this machine's cores, stopped at the end)",
    )
    parser.add_argument(
        "--cpus-per-trial",
        type=int,
        help="CPUs per trial (default: train's actors + 1 learner, at most the cores of the largest node)",
    )
    parser.add_argument(
        "--gpus-per-trial",
        type=float,
        help="GPUs (or a fraction) per trial (default 1 with --device cuda, else 0)",
    )
    parser.add_argument(
        "--max-concurrent", type=int, help="trials running at once at most (default: as resources allow)"
    )
    parser.add_argument(
        "--max-failures", type=int, default=3, help="retries of a trial whose train process dies (default 3)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep NAME: finished trials are kept, the others resume from their checkpoints; "
        "options not given again are those of the first run",
    )
    parser.add_argument("--verbose", action="store_true", help="show Ray's logs and Tune's status table")
    return parser


@dataclass
class SweepPlan:
    """What a sweep will run, decided before Ray starts."""

    name: str
    folder: Path
    agents: list[str]
    seeds: list[int]
    obs: str
    train_options: list[str]
    config: Config  # the train config shared by the trials (of the first agent)


def plan_sweep(args: argparse.Namespace, train_options: list[str] | None) -> SweepPlan:
    """Check the command line (no Ray needed) and decide the grid; CliError on bad input."""
    saved: dict[str, Any] = {}
    if args.resume:
        if not args.name:
            raise CliError("--resume needs the --name of the sweep to continue")
        sweep_file = Path(args.root) / args.name / SWEEP_FILE
        try:
            saved = json.loads(sweep_file.read_text())
        except OSError:
            raise CliError(f"no sweep to resume: {sweep_file} not found") from None
        except ValueError:
            raise CliError(f"cannot resume: {sweep_file} is not valid JSON") from None
    agents = args.agents or saved.get("agents")
    seed_tokens = args.seeds or [",".join(str(seed) for seed in saved.get("seeds", []))]
    obs = args.obs or saved.get("obs") or "pixels"
    if train_options is None:
        train_options = list(saved.get("train_options", []))
    if not agents:
        raise CliError("--agents: give at least one agent")
    if not args.seeds and not saved:
        raise CliError("--seeds: give the seeds, e.g. 0-4")
    seeds = parse_seeds(seed_tokens)
    for name, value, low in (
        ("--max-failures", args.max_failures, 0),
        ("--max-concurrent", args.max_concurrent, 1),
        ("--cpus-per-trial", args.cpus_per_trial, 1),
    ):
        if value is not None and value < low:
            raise CliError(f"{name} must be at least {low}, got {value}")
    if args.gpus_per_trial is not None and args.gpus_per_trial < 0:
        raise CliError(f"--gpus-per-trial must not be negative, got {args.gpus_per_trial}")
    config = check_train_options(train_options, agents, obs, on_cluster=args.address is not None)
    name = args.name or f"{obs}-{time.strftime('%Y%m%d-%H%M%S')}"
    if "/" in name or name in ("", ".", ".."):
        raise CliError(f"--name must be a plain folder name, got {name!r}")
    folder = Path(args.root).absolute() / name
    if not args.resume and folder.exists() and any(folder.iterdir()):
        raise CliError(f"sweep folder {folder} already exists; continue it with --resume --name {name}")
    return SweepPlan(name, folder, list(agents), seeds, obs, list(train_options), config)


def _split_train_options(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, None


def _import_ray() -> Any:
    try:
        import ray
        import ray.tune  # noqa: F401
    except ImportError:
        raise CliError("Ray is not installed; install with `pip install -e .[cluster]`") from None
    return ray


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


def start_ray(ray: Any, address: str | None, verbose: bool) -> None:
    """Start an embedded local Ray or join the cluster at `address` (CliError if unreachable)."""
    import logging

    quiet = {"logging_level": logging.INFO if verbose else logging.ERROR, "log_to_driver": verbose}
    if address is None:
        source = _source_checkout()
        if (
            source
        ):  # the trials import this checkout's nalu_rl, as the command does (Ray inherits the variable)
            os.environ["PYTHONPATH"] = os.pathsep.join(
                p for p in (source, os.environ.get("PYTHONPATH", "")) if p
            )
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, **quiet)
        return
    _probe_address(address)
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CliError(f"cannot join the Ray cluster at {address}: {message}") from None


def _source_checkout() -> str:
    """The project folder this nalu_rl was imported from when it is a source checkout, else ""."""
    root = Path(nalu_rl.__file__).resolve().parent.parent
    return str(root) if (root / "pyproject.toml").is_file() else ""


def _largest_node(ray: Any) -> dict[str, float]:
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    return {
        "CPU": max((node.get("CPU", 0.0) for node in nodes), default=0.0),
        "GPU": max((node.get("GPU", 0.0) for node in nodes), default=0.0),
    }


def trial_resources(
    plan: SweepPlan, args: argparse.Namespace, largest_node: dict[str, float]
) -> tuple[int, float]:
    """CPUs and GPUs each trial asks for, fitted to the largest node; CliError for GPUs it lacks."""
    wanted = args.cpus_per_trial or trial_cpus(plan.config)
    cpus = max(1, min(wanted, int(largest_node["CPU"]) or 1))
    if args.cpus_per_trial and cpus < args.cpus_per_trial:
        print(
            f"note: --cpus-per-trial {args.cpus_per_trial} lowered to {cpus}, the cores of the largest node",
            file=sys.stderr,
        )
    gpus = (
        args.gpus_per_trial
        if args.gpus_per_trial is not None
        else (1.0 if plan.config.device == "cuda" else 0.0)
    )
    if gpus > largest_node["GPU"]:
        raise CliError(
            f"each trial asks for {gpus:g} GPU, but the largest Ray node has {largest_node['GPU']:g}"
        )
    return cpus, gpus


def make_specs(plan: SweepPlan, cpus: int) -> list[TrialSpec]:
    """One spec per agent x seed, in that order."""
    given = parse_config(plan.train_options)[1]
    threads = 0 if "learner_threads" in given else learner_threads(plan.config, cores=cpus)
    return [
        TrialSpec(
            agent,
            seed,
            plan.obs,
            str(plan.folder / trial_folder_name(agent, plan.obs, seed)),
            tuple(plan.train_options),
            threads,
            _source_checkout(),
        )
        for agent in plan.agents
        for seed in plan.seeds
    ]


def write_figure(plan: SweepPlan, specs: Sequence[TrialSpec]) -> list[Path]:
    """The combined success-by-delay figure and Markdown table of the finished trials' evaluations."""
    from nalu_rl.figures import curves_over_seeds, markdown_table, plot_success_by_delay, read_success_rows

    csvs = [Path(spec.folder) / "success_by_delay.csv" for spec in specs]
    csvs = [path for path in csvs if path.exists()]
    if not csvs:
        return []
    rows = read_success_rows(csvs)
    seeds = len(plan.seeds)
    figure = plot_success_by_delay(
        rows,
        plan.folder / "success_by_delay.png",
        train_range=tuple(plan.config.delay_range),
        title=f"{plan.name}: {plan.obs}, {seeds} seed{'s' if seeds != 1 else ''} per agent",
    )
    table = plan.folder / "success_by_delay.md"
    table.write_text(markdown_table(curves_over_seeds(rows)))
    return [figure, table]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep as the command line says; return the exit code (0 all finished, 1 some failed,
    130 interrupted)."""
    sweep_argv, train_options = _split_train_options(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    parser.error = lambda message: (_ for _ in ()).throw(CliError(message))  # type: ignore[method-assign]
    args = parser.parse_args(sweep_argv)
    plan = plan_sweep(args, train_options)
    ray = _import_ray()
    stop_requests: list[int] = []
    previous_handlers: dict[int, Any] = {}
    specs: list[TrialSpec] = []
    start_ray(ray, args.address, args.verbose)
    try:
        cpus, gpus = trial_resources(plan, args, _largest_node(ray))
        specs = make_specs(plan, cpus)
        plan.folder.mkdir(parents=True, exist_ok=True)
        (plan.folder / SWEEP_FILE).write_text(
            json.dumps(
                {
                    "agents": plan.agents,
                    "seeds": plan.seeds,
                    "obs": plan.obs,
                    "train_options": plan.train_options,
                },
                indent=2,
            )
            + "\n"
        )
        pending = [
            spec for spec in specs if (read_trial_status(spec.folder) or {}).get("status") != "finished"
        ]
        progress = SweepProgress(plan.name, specs)
        print(
            f"sweep {plan.name}: {len(specs)} trials ({len(specs) - len(pending)} finished already), "
            f"{cpus} CPU{'s' if cpus != 1 else ''}{f' and {gpus:g} GPU' if gpus else ''} each; "
            f"folder {plan.folder}",
            flush=True,
        )
        if pending:

            def request_stop(signum: int, _frame: Any) -> None:
                stop_requests.append(signum)
                print(
                    f"stopping: {signal.Signals(signum).name} received; every trial saves its checkpoint "
                    "(send it again to stop at once)",
                    file=sys.stderr,
                    flush=True,
                )
                for sig, handler in previous_handlers.items():  # a second Ctrl-C stops without waiting
                    signal.signal(sig, handler)

            os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"
            os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "1"
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous_handlers[sig] = signal.signal(sig, request_stop)
            run_trials(ray, plan, args, pending, progress, cpus, gpus, lambda: bool(stop_requests))
        return summarize(plan, specs, progress, interrupted=bool(stop_requests))
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        ray.shutdown()
        if args.address is None:
            for spec in specs:  # the trials stop their processes; this catches any whose trial was killed
                stop_leftover_train(spec.folder)


def run_trials(
    ray: Any,
    plan: SweepPlan,
    args: argparse.Namespace,
    specs: Sequence[TrialSpec],
    progress: SweepProgress,
    cpus: int,
    gpus: float,
    stop_requested: Callable[[], bool],
) -> None:
    """Run the trials of `specs` as one Tune experiment, until they end or a stop is requested."""
    import logging

    from ray import tune

    try:
        from ray.tune import CheckpointConfig, FailureConfig, RunConfig
    except ImportError:  # older Ray keeps them in ray.train (only Ray 2.60 was tried)
        from ray.train import CheckpointConfig, FailureConfig, RunConfig

    if not args.verbose:
        os.environ["RAY_AIR_NEW_OUTPUT"] = (
            "0"  # the legacy reporter is silent at verbose=0, the new one is not
        )
        for logger_name in ("ray", "ray.tune", "ray.train", "ray.air"):
            logging.getLogger(logger_name).setLevel(logging.CRITICAL)

    def trial_name(trial: Any) -> str:
        return TrialSpec.from_json(trial.config["trial"]).name

    tuner = tune.Tuner(
        tune.with_resources(_make_trainable(tune), {"cpu": cpus, "gpu": gpus}),
        param_space={"trial": tune.grid_search([spec.to_json() for spec in specs])},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=args.max_concurrent,
            trial_name_creator=trial_name,
            trial_dirname_creator=trial_name,
        ),
        run_config=RunConfig(
            name=time.strftime("%Y%m%d-%H%M%S"),
            storage_path=str(plan.folder / ".ray"),
            failure_config=FailureConfig(max_failures=args.max_failures),
            checkpoint_config=CheckpointConfig(checkpoint_frequency=0, checkpoint_at_end=False),
            callbacks=[_make_callback(tune, progress)],
            stop=_make_stopper(tune, stop_requested),
            verbose=2 if args.verbose else 0,
        ),
    )
    tuner.fit()


def summarize(plan: SweepPlan, specs: Sequence[TrialSpec], progress: SweepProgress, interrupted: bool) -> int:
    """Print how each trial ended, write the figure and table when all are done; return the exit code."""
    finished, failed, unfinished = [], [], []
    for spec in specs:
        status = read_trial_status(spec.folder) or {}
        if status.get("status") == "finished":
            finished.append(spec)
        elif status.get("status") == "failed" or progress.state.get(spec.name) == "failed":
            reason = (
                status.get("error") or progress.errors.get(spec.name) or last_exit_description(spec.folder)
            )
            failed.append((spec, reason))
        else:
            unfinished.append(spec)
    print(
        f"sweep {plan.name}: {len(finished)} of {len(specs)} trials finished, {len(failed)} failed, "
        f"{len(unfinished)} not finished"
    )
    for spec, reason in failed:
        print(f"  failed: {spec.name}: {reason}")
    if unfinished:
        names = ", ".join(spec.name for spec in unfinished)
        print(f"  not finished: {names}; continue with --resume --name {plan.name}")
    if finished and not unfinished:
        written = write_figure(plan, finished)
        if written:
            print("wrote " + " and ".join(str(path) for path in written))
        else:
            print("no evaluation CSVs to plot (--eval-episodes 0?)")
    if interrupted or unfinished:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    run_cli(main)
