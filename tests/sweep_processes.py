"""Helpers of the sweep tests: start a sweep, watch its process family, read what its trials left."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

from nalu_rl.sweep.folder import read_trial_history

REPO_ROOT = Path(__file__).resolve().parent.parent
# Tiny runs: symbolic observations, one process, a short evaluation.
TINY_TRAIN = [
    "--actors", "0", "--eval-episodes", "2", "--eval-max-delay", "3",
    "--checkpoint-interval-s", "0.5", "--log-interval-s", "1",
]  # fmt: skip
# The agent that examples/custom_core.py registers (the sweep's documented `cd examples` command).
EXAMPLE_AGENT = "leaky"
EXAMPLES = REPO_ROOT / "examples"


def process_table() -> dict[int, tuple[int, int, int]]:
    """Parent pid, session id and start time (clock ticks since boot) of each process, by pid."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (command) "
            table[int(entry.name)] = (int(fields[1]), int(fields[3]), int(fields[19]))
    return table


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def family(root: int, table: dict[int, tuple[int, int, int]]) -> set[int]:
    """The processes `root` started: its descendants, and the members of its session when it leads one."""
    members = {pid for pid, (_, session, _) in table.items() if session == root and pid != root}
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in members:
                members.add(child)
                stack.append(child)
    return members


class WatchedFamily:
    """The processes a process started, sampled in the background while a test runs, so that one
    re-parented after its parent exits is still known; only these are checked, never other processes
    that run on the machine."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, tuple[int, str]] = {}  # pid -> (start time, command line)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample_until_done, daemon=True)

    def sample(self) -> None:
        table = process_table()
        for pid in family(self.root, table):
            self.seen.setdefault(pid, (table[pid][2], command_line(pid)))

    def _sample_until_done(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def __enter__(self) -> WatchedFamily:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.done.set()
        self.thread.join()

    def alive(self) -> dict[int, str]:
        """The processes seen that still run (the same ones, not reused pids), with their command lines."""
        table = process_table()
        return {
            pid: line
            for pid, (started, line) in self.seen.items()
            if pid in table and table[pid][2] == started
        }


def train_pids(folder: Path) -> set[int]:
    """Train processes of this test's run folders (their command lines name `folder`)."""
    return {
        pid
        for pid in process_table()
        if "nalu_rl.train" in (line := command_line(pid)) and str(folder) in line
    }


def assert_nothing_left(started: WatchedFamily, folder: Path) -> None:
    """No process the sweep started (Ray's included) and no train process of `folder` is alive (a few
    seconds are allowed for processes that are exiting)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = set(started.alive()) | train_pids(folder)
        if not left:
            return
        time.sleep(0.5)
    raise AssertionError(f"processes left behind: {[command_line(pid) or pid for pid in left]}")


def sweep_command(root: Path, *arguments: str) -> list[str]:
    return [sys.executable, "-m", "nalu_rl.sweep", "--root", str(root), *arguments]


def start_sweep(root: Path, *arguments: str) -> subprocess.Popen:
    """The sweep as a command in its own process group (so a test can Ctrl-C the whole group)."""
    return subprocess.Popen(
        sweep_command(root, *arguments),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def checkpoint_steps(folder: Path) -> int:
    return int(torch.load(folder / "checkpoint.pt", weights_only=True)["steps"])


def first_logged_step(event_files: list[Path]) -> int:
    """The first step at which these TensorBoard event files log the training success rate."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps = []
    for path in event_files:
        accumulator = EventAccumulator(str(path))
        accumulator.Reload()
        if "charts/success_rate" in accumulator.Tags()["scalars"]:
            steps += [event.step for event in accumulator.Scalars("charts/success_rate")]
    return min(steps)


def launches(folder: Path) -> list[dict]:
    return [record for record in read_trial_history(folder) if record["event"] == "launch"]
