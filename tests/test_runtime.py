"""The multiprocess runtimes: actor processes feeding a learner, hogwild workers, and their faults."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_train import EASY, random_policy_success_rate

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint


def child_pids(pid: int) -> set[int]:
    """Live (non-zombie) processes whose parent is `pid`."""
    children = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            children.add(int(entry))
    return children


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def actor_pids(pid: int) -> set[int]:
    """Children of `pid` that are actor processes (not multiprocessing's resource tracker)."""
    return {
        child for child in child_pids(pid) if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    }


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def start_training(logdir: Path) -> subprocess.Popen:
    argv = [*EASY, "--actors", "2", "--total-steps", "100000000", "--checkpoint-interval-s", "1"]
    argv += ["--logdir", str(logdir)]
    return subprocess.Popen(
        [sys.executable, "-m", "nalu_rl.train", *argv],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_multiprocess_learner_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    run = train.run_training(
        [
            *EASY,
            "--actors",
            "2",
            "--envs-per-actor",
            "16",
            "--buffers-per-actor",
            "1",
            "--total-steps",
            "50000",
        ]
        + ["--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.15), (run.window.success_rate(), chance)
    assert run.counters["actor_restarts"] == 0


def test_hogwild_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    run = train.run_training(
        [*EASY, "--runtime", "hogwild", "--actors", "2", "--hogwild-envs", "16", "--total-steps", "40000"]
        + ["--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.1), (run.window.success_rate(), chance)
    # Every worker update went through the one shared Adam: its step count is the update count.
    assert float(load_checkpoint(tmp_path)["optimizer"]["state"][0]["step"]) == run.updates


def test_killed_actor_is_replaced_and_sigint_stops_every_process_within_5_s(tmp_path: Path) -> None:
    process = start_training(tmp_path)
    try:
        assert wait_for(lambda: len(actor_pids(process.pid)) == 2, 60)
        victim = min(actor_pids(process.pid))
        os.kill(victim, signal.SIGKILL)
        assert wait_for(lambda: len(actor_pids(process.pid) - {victim}) == 2, 30)
        assert process.poll() is None
        # The periodic checkpoint shows that the run went on learning with the replacement.
        checkpoint = tmp_path / "checkpoint.pt"
        assert wait_for(lambda: checkpoint.exists() and load_checkpoint(tmp_path)["steps"] > 0, 60)
        actors = actor_pids(process.pid)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        assert time.monotonic() - started < 5.0
        assert wait_for(lambda: not any(alive(pid) for pid in actors), 1.0)
        assert not child_pids(process.pid)
        stderr = process.stderr.read()
        assert "stopped by SIGINT" in stderr and "1 dead actor replaced" in stderr, stderr
        assert load_checkpoint(tmp_path)["steps"] > 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
