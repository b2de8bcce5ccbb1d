"""One trial of a sweep: its spec, and its `python -m nalu_rl.train` process launched in the trial
folder, watched, and stopped.

How a train process ended is read from its run's run_status.json (nalu_rl.runtime.status) and its
exit code: a run that finished or refused its input ends the trial; one that died, failed or was
stopped from outside raises RuntimeError, so the backend retries it (`--resume` from its checkpoint).
No Ray here: the backend drives this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from nalu_rl.cli import CliError
from nalu_rl.runtime.status import read_run_status
from nalu_rl.sweep import launch
from nalu_rl.sweep.folder import (
    TRAIN_LOG_FILE,
    TRAIN_PID_FILE,
    TRIAL_STATUS_FILE,
    append_trial_history,
    checkpoint_steps,
    write_trial_status,
)
from nalu_rl.sweep.progress import TrainingProgress

# After SIGINT a train process has this long to save its checkpoint and exit before SIGKILL: it
# stops its workers and writes the checkpoint within 5 s, but on busy cores the interpreter's own
# exit can add seconds (docs/TRAINING.md, "Time to stop").
STOP_GRACE_S = 20.0
# The program that becomes a trial's train process (run by its path).
LAUNCHER = str(Path(launch.__file__).resolve())


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a sweep: which run it trains, where, and with which train options."""

    agent: str
    seed: int
    obs: str | None  # None: the env has no observation modes
    folder: str  # absolute path of the run folder
    train_options: tuple[str, ...]  # the options after "--", as given
    learner_threads: int  # 0: the options set --learner-threads themselves
    python_path: str  # prepended to PYTHONPATH of the train process ("" for none; os.pathsep between)

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


def trial_folder_name(agent: str, task: str, seed: int) -> str:
    """The run folder name of one trial inside the sweep folder (`task`: the sweep's `task`, its
    observation mode or env id)."""
    return f"{agent}-{task}-seed{seed}"


def train_arguments(spec: TrialSpec, resume: bool) -> list[str]:
    """The `nalu_rl.train` command-line arguments of a trial: a fresh run, or `--resume` of its folder."""
    if resume:
        head = ["--resume", spec.folder]
    else:
        observation = ["--obs", spec.obs] if spec.obs is not None else []
        head = ["--agent", spec.agent, *observation, "--seed", str(spec.seed), "--logdir", spec.folder]
    head.append("--no-progress")  # the output goes to train.log
    if spec.learner_threads:
        head += ["--learner-threads", str(spec.learner_threads)]
    return head + list(spec.train_options)


def trial_outcome(
    exit_code: int, run_status: dict[str, Any] | None, steps: int | None, last_output_line: str
) -> dict[str, Any]:
    """The trial status of a train process that exited with `exit_code`, leaving `run_status` (None
    when it wrote none since its launch) and a checkpoint at `steps`: {"status": "finished", ...} or
    {"status": "failed", "error": ...} for a run that ended for good; RuntimeError for one the trial
    should run again."""
    state = (run_status or {}).get("state")
    reason = (run_status or {}).get("reason")
    error = f"error: {run_status['error']}" if run_status and run_status.get("error") else None
    if exit_code == 0 and state == "finished":
        return {"status": "finished", "stop_reason": reason, "steps": steps}
    if exit_code == 2:  # train refused its options or its folder: running it again cannot help
        return {"status": "failed", "error": error or f"train exited with code 2: {last_output_line}"}
    if exit_code == 0 and state == "stopped":
        raise RuntimeError(f"train was stopped from outside the sweep ({reason}); resuming")
    if exit_code < 0:
        raise RuntimeError(f"train was killed by {signal.Signals(-exit_code).name}")
    raise RuntimeError(f"train exited with code {exit_code}: {error or last_output_line or 'no output'}")


def _is_train_of(pid: int, folder: str) -> bool:
    """Whether `pid` is alive and is a train process (or its launcher) of `folder`, not a reused pid."""
    try:
        command_line = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc: alive is all we can tell
    return ("nalu_rl.train" in command_line or LAUNCHER in command_line) and folder in command_line


def _wait_for_exit(pid: int, folder: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _is_train_of(pid, folder):
            return True
        time.sleep(0.1)
    return not _is_train_of(pid, folder)


def stop_leftover_train(folder: str | os.PathLike, grace_s: float = STOP_GRACE_S) -> bool:
    """Stop a train process that its pid file says still runs on this host for `folder`
    (SIGINT to its process group, SIGKILL after `grace_s`); True if there was one."""
    folder = str(folder)
    try:
        host, pid_text = (Path(folder) / TRAIN_PID_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    if host != socket.gethostname() or not _is_train_of(pid, folder):
        return False
    for sig in (signal.SIGINT, signal.SIGKILL):
        with contextlib.suppress(OSError):
            os.killpg(pid, sig)
        if _wait_for_exit(pid, folder, grace_s):
            break
    with contextlib.suppress(OSError):
        (Path(folder) / TRAIN_PID_FILE).unlink()
    return True


def _train_environment(python_path: str) -> dict[str, str]:
    environment = dict(os.environ)
    if python_path:
        environment["PYTHONPATH"] = os.pathsep.join(
            part for part in (python_path, environment.get("PYTHONPATH", "")) if part
        )
    return environment


class TrainProcess:
    """The `python -m nalu_rl.train` child of one trial: launched, watched, and stopped."""

    def __init__(self, spec: TrialSpec) -> None:
        self.spec = spec
        self.folder = Path(spec.folder)
        self.process: subprocess.Popen | None = None
        self.log_file: IO[str] | None = None
        self.log_offset = 0
        self.launched_at = datetime.now(timezone.utc)
        self.progress = TrainingProgress(spec.folder)
        self.resumed_from_steps: int | None = None
        self.final_metrics: dict[str, Any] | None = None

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
        self.log_file = open(self.folder / TRAIN_LOG_FILE, "a")  # noqa: SIM115 (closed in close_log)
        self.log_file.write(f"== sweep: python -m nalu_rl.train {' '.join(arguments)}\n")
        self.log_file.flush()
        self.log_offset = self.log_file.tell()
        # Whole milliseconds, as run_status.json has them: a status of this launch is never older.
        now = datetime.now(timezone.utc)
        self.launched_at = now.replace(microsecond=now.microsecond // 1000 * 1000)
        self.process = subprocess.Popen(
            [sys.executable, LAUNCHER, str(os.getpid()), *arguments],
            stdin=subprocess.DEVNULL,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            cwd=self.folder,
            env=_train_environment(self.spec.python_path),
            start_new_session=True,  # its own process group: a terminal's Ctrl-C is the sweep's to pass on
        )
        (self.folder / TRAIN_PID_FILE).write_text(f"{socket.gethostname()} {self.process.pid}\n")
        append_trial_history(
            self.folder,
            {
                "event": "launch",
                "pid": self.process.pid,
                "host": socket.gethostname(),
                "resumed_from_steps": self.resumed_from_steps,
            },
        )

    def watch(self, seconds: float) -> dict[str, Any]:
        """Wait up to `seconds` for train to end; return the trial's metrics for the backend.

        A train run that ended for good (finished, or refused its input with exit code 2) gives
        `done`; one that died, failed or was stopped from outside raises RuntimeError (retry it).
        """
        assert self.process is not None
        if self.final_metrics is not None:  # the backend may ask once more after `done`
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
        status = self._record_exit(exit_code)
        self.close_log()
        if status.get("steps") is not None:
            metrics["steps"] = status["steps"]
        self.final_metrics = {
            **metrics,
            "state": status["status"],
            "error": status.get("error", ""),
            "done": True,
        }
        return self.final_metrics

    def _record_exit(self, exit_code: int) -> dict[str, Any]:
        """Log the exit of train in the trial's history; return the trial status of a run that ended for
        good (also written to the folder), or raise RuntimeError (see `trial_outcome`)."""
        assert self.process is not None
        with contextlib.suppress(OSError):  # actor processes of a train process that was killed
            os.killpg(self.process.pid, signal.SIGKILL)
        self._forget_pid()
        run_status = self._run_status_since_launch()
        steps = checkpoint_steps(self.folder)
        if steps is None and run_status is not None:
            steps = run_status["steps"]
        error = run_status.get("error") if run_status else None
        append_trial_history(
            self.folder,
            {
                "event": "exit",
                "exit_code": exit_code,
                "state": run_status["state"] if run_status else None,
                "stop_reason": run_status.get("reason") if run_status else None,
                "steps": steps,
                "error": f"error: {error}" if error else None,
            },
        )
        status = trial_outcome(exit_code, run_status, steps, self._last_output_line())
        write_trial_status(self.folder, status)
        return status

    def _run_status_since_launch(self) -> dict[str, Any] | None:
        """The run_status.json that this launch's train process wrote, or None (none, or an older one)."""
        status = read_run_status(self.folder)
        try:
            updated = datetime.fromisoformat(str((status or {}).get("updated")))
        except ValueError:
            return None
        return status if updated >= self.launched_at else None

    def _last_output_line(self) -> str:
        """The last line train wrote since its launch (shown when its run_status.json says nothing)."""
        try:
            with open(self.folder / TRAIN_LOG_FILE, errors="replace") as file:
                file.seek(self.log_offset)
                lines = file.read().strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

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
            append_trial_history(
                self.folder, {"event": "stopped by the sweep", "exit_code": self.process.poll()}
            )
            self._forget_pid()
        self.close_log()

    def _forget_pid(self) -> None:
        with contextlib.suppress(OSError):
            (self.folder / TRAIN_PID_FILE).unlink()

    def close_log(self) -> None:
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None
