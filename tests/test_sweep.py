"""`python -m nalu_rl.sweep`: a sweep on a local Ray finishes, survives a killed train process and a
Ctrl-C, resumes without re-running finished trials, leaves no process behind, and refuses bad input;
a trial learns how its train run ended from the run_status.json that train writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_processes import (
    REPO_ROOT,
    TINY_TRAIN,
    WatchedFamily,
    assert_nothing_left,
    checkpoint_steps,
    first_logged_step,
    launches,
    start_sweep,
    wait_for,
)

from nalu_rl.runtime.status import read_run_status
from nalu_rl.sweep.folder import TRAIN_PID_FILE, TRIAL_STATUS_FILE, read_trial_history
from nalu_rl.sweep.plan import parse_seeds
from nalu_rl.sweep.trial import TrainProcess, TrialSpec, trial_folder_name, trial_outcome

pytest.importorskip("ray.tune")


def test_seed_lists_accept_ranges_lists_and_both() -> None:
    assert parse_seeds(["0-4"]) == [0, 1, 2, 3, 4]
    assert parse_seeds(["0,2,5"]) == [0, 2, 5]
    assert parse_seeds(["0-2,7"]) == [0, 1, 2, 7]
    assert parse_seeds(["3", "1-2", "3"]) == [3, 1, 2]


def test_a_train_run_that_refuses_its_folder_fails_once_with_its_error_line(tmp_path: Path) -> None:
    """No Ray here: the trial's process logic alone. A corrupt checkpoint makes `train --resume` exit
    with code 2; the trial ends as failed (no retry) and keeps train's one-line error."""
    folder = tmp_path / trial_folder_name("nac", "symbolic", 0)
    folder.mkdir()
    (folder / "checkpoint.pt").write_bytes(b"not a checkpoint")
    spec = TrialSpec("nac", 0, "symbolic", str(folder), tuple(TINY_TRAIN), 1, str(REPO_ROOT))
    train = TrainProcess(spec)
    train.launch()
    try:
        wait_for(lambda: train.process.poll() is not None, 60, "train to exit")
        metrics = train.watch(0)
    finally:
        train.stop()
    assert metrics["done"] and metrics["state"] == "failed"
    assert metrics["error"].startswith("error: cannot read checkpoint")
    status = json.loads((folder / TRIAL_STATUS_FILE).read_text())
    assert status == {"status": "failed", "error": metrics["error"]}
    assert [record["exit_code"] for record in read_trial_history(folder) if record["event"] == "exit"] == [2]


def test_a_train_run_reports_running_then_stopped_by_sigint_in_its_run_status(tmp_path: Path) -> None:
    """The file the sweep reads: "running" with the steps of each checkpoint, then how the run ended."""
    folder = tmp_path / "run"
    command = [sys.executable, "-m", "nalu_rl.train", "--agent", "nac", "--obs", "symbolic", "--logdir"]
    train = subprocess.Popen(
        [*command, str(folder), "--no-progress", *TINY_TRAIN, "--total-steps", "100000000"],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: (read_run_status(folder) or {}).get("steps", 0) > 0, 120, "a checkpoint's status")
        running = read_run_status(folder)
        train.send_signal(signal.SIGINT)
        assert train.wait(timeout=60) == 0
    finally:
        if train.poll() is None:
            train.kill()
    assert running is not None and running["state"] == "running"
    assert running["total_steps"] == 100000000 and running["error"] is None
    ended = read_run_status(folder)
    assert ended is not None
    assert ended == {**ended, "state": "stopped", "reason": "stopped by SIGINT", "error": None}
    assert ended["steps"] == checkpoint_steps(folder) >= running["steps"]
    assert ended["updated"] >= running["updated"]


def test_a_train_run_that_spends_its_budget_reports_finished(tmp_path: Path) -> None:
    from nalu_rl.train import run_training

    run = run_training(["--agent", "nac", "--obs", "symbolic", "--logdir", str(tmp_path), *TINY_TRAIN,
                        "--total-steps", "640"])  # fmt: skip
    status = json.loads((tmp_path / "run_status.json").read_text())
    assert set(status) == {"state", "steps", "total_steps", "reason", "error", "updated"}
    assert status["state"] == "finished" and status["error"] is None
    assert status["reason"] == run.stop_reason and status["reason"].startswith("step budget")
    assert status["steps"] == run.steps >= status["total_steps"] == 640


FINISHED = {"state": "finished", "steps": 640, "total_steps": 640, "reason": "step budget of 640 spent"}


def test_a_finished_run_or_a_refused_input_ends_the_trial() -> None:
    assert trial_outcome(0, FINISHED, 640, "") == {
        "status": "finished",
        "stop_reason": "step budget of 640 spent",
        "steps": 640,
    }
    refused = {"state": "failed", "steps": 0, "total_steps": 640, "error": "cannot read checkpoint x"}
    assert trial_outcome(2, refused, None, "") == {
        "status": "failed",
        "error": "error: cannot read checkpoint x",
    }
    # No status of this launch (train refused its options before its folder was known): the output says why.
    assert trial_outcome(2, None, None, "error: bad option") == {
        "status": "failed",
        "error": "train exited with code 2: error: bad option",
    }


RETRIED = {
    "killed": (-signal.SIGKILL, {**FINISHED, "state": "running"}, "train was killed by SIGKILL"),
    "stopped from outside": (
        0,
        {**FINISHED, "state": "stopped", "reason": "stopped by SIGTERM"},
        "from outside",
    ),
    "failed run": (
        1,
        {**FINISHED, "state": "failed", "error": "3 updates in a row had a NaN"},
        "error: 3 updates",
    ),
    "exit 0 without a status": (0, None, "exited with code 0"),
}


@pytest.mark.parametrize(("exit_code", "run_status", "message"), RETRIED.values(), ids=RETRIED.keys())
def test_a_run_that_died_failed_or_was_stopped_from_outside_is_retried(
    exit_code, run_status, message
) -> None:
    with pytest.raises(RuntimeError, match=message):
        trial_outcome(exit_code, run_status, 320, "last line")


@pytest.mark.slow
def test_a_two_trial_sweep_finishes_with_its_figure_and_a_killed_train_process_continues(
    tmp_path: Path,
) -> None:
    """Two trials at once (one CPU each); the `nac` trial's train process is killed with SIGKILL once it
    has a checkpoint: it is retried with --resume and continues from that checkpoint's steps."""
    budget = 40000
    grid = ["--agents", "nac", "lstm", "--seeds", "0", "--obs", "symbolic", "--name", "grid"]
    sweep = start_sweep(tmp_path, *grid, "--", *TINY_TRAIN, "--total-steps", str(budget))
    killed = tmp_path / "grid" / trial_folder_name("nac", "symbolic", 0)
    try:
        with WatchedFamily(sweep.pid) as started:
            wait_for(
                lambda: (killed / "checkpoint.pt").exists() and checkpoint_steps(killed) > 0,
                120,
                "a checkpoint",
            )
            steps_before_kill = checkpoint_steps(killed)
            os.kill(int((killed / TRAIN_PID_FILE).read_text().split()[1]), signal.SIGKILL)
            stdout, stderr = sweep.communicate(timeout=240)
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 0, stderr[-2000:]

    sweep_folder = tmp_path / "grid"
    for agent in ("nac", "lstm"):
        run = sweep_folder / trial_folder_name(agent, "symbolic", 0)
        for name in ("config.json", "checkpoint.pt", "success_by_delay.csv", "success_by_delay.png"):
            assert (run / name).is_file(), f"{run.name}/{name} missing"
        assert list(run.glob("events.out.tfevents.*")), f"{run.name} has no TensorBoard events"
        assert json.loads((run / "config.json").read_text())["agent"] == agent
        assert checkpoint_steps(run) >= budget
        assert json.loads((run / TRIAL_STATUS_FILE).read_text())["status"] == "finished"
    assert (sweep_folder / "success_by_delay.png").stat().st_size > 0
    table_header = (sweep_folder / "success_by_delay.md").read_text().splitlines()[0]
    assert "lstm" in table_header and "nac" in table_header
    assert "2/2 finished" in stdout

    exits = [record for record in read_trial_history(killed) if record["event"] == "exit"]
    assert [record["exit_code"] for record in exits] == [-signal.SIGKILL, 0]
    first, second = launches(killed)
    assert first["resumed_from_steps"] is None
    assert second["resumed_from_steps"] >= steps_before_kill > 0
    assert "--resume" in (killed / "train.log").read_text()
    # The relaunched process logged from where the checkpoint stood, not from step 0.
    second_events = [
        path
        for path in killed.glob("events.out.tfevents.*")
        if path.name.split(".")[-2] == str(second["pid"])
    ]
    assert first_logged_step(second_events) >= second["resumed_from_steps"]
    assert len(launches(sweep_folder / trial_folder_name("lstm", "symbolic", 0))) == 1
    assert any("raylet" in line for _, line in started.seen.values()), "Ray's processes were not watched"
    assert_nothing_left(started, tmp_path)


@pytest.mark.slow
def test_ctrl_c_stops_the_trials_and_resume_skips_the_finished_ones(tmp_path: Path) -> None:
    grid = [
        "--agents",
        "nac",
        "lstm",
        "--seeds",
        "0",
        "--obs",
        "symbolic",
        "--name",
        "cut",
        "--max-concurrent",
        "1",
    ]
    sweep = start_sweep(tmp_path, *grid, "--", *TINY_TRAIN, "--total-steps", "40000")
    folders = [tmp_path / "cut" / trial_folder_name(agent, "symbolic", 0) for agent in ("nac", "lstm")]

    def one_finished_one_checkpointed() -> bool:
        finished = [folder for folder in folders if (folder / TRIAL_STATUS_FILE).exists()]
        running = [folder for folder in folders if (folder / TRAIN_PID_FILE).exists()]
        return len(finished) == 1 and bool(running) and (running[0] / "checkpoint.pt").exists()

    try:
        with WatchedFamily(sweep.pid) as started:
            wait_for(one_finished_one_checkpointed, 180, "one trial finished and the other checkpointed")
            interrupted_at = time.monotonic()
            os.killpg(sweep.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
            _, stderr = sweep.communicate(timeout=60)
            exit_seconds = time.monotonic() - interrupted_at
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 130, stderr[-2000:]
    # A bound for a hung sweep, not the promise (scripts/measure_stop_latency.py measures that).
    assert exit_seconds < 60, f"the sweep took {exit_seconds:.1f} s to stop"
    finished, unfinished = sorted(folders, key=lambda folder: not (folder / TRIAL_STATUS_FILE).exists())
    stopped = read_trial_history(unfinished)[-1]
    # Train ended on the SIGINT by itself, not by the SIGKILL after the grace: exit 0 when the signal
    # came while it trained (checkpoint saved), 130 when it came in the short final evaluation.
    assert stopped["event"] == "stopped by the sweep" and stopped["exit_code"] in (0, 130), stopped
    steps_at_stop = checkpoint_steps(unfinished)
    assert steps_at_stop > 0
    assert_nothing_left(started, tmp_path)
    finished_status = (finished / TRIAL_STATUS_FILE).read_text()

    resumed = start_sweep(tmp_path, "--resume", "--name", "cut")
    try:
        with WatchedFamily(resumed.pid) as started:
            _, stderr = resumed.communicate(timeout=240)
    finally:
        if resumed.poll() is None:
            os.killpg(resumed.pid, signal.SIGKILL)
    assert resumed.returncode == 0, stderr[-2000:]
    assert len(launches(finished)) == 1, "a finished trial was run again"
    assert (finished / TRIAL_STATUS_FILE).read_text() == finished_status
    relaunch = launches(unfinished)[-1]
    assert len(launches(unfinished)) == 2 and relaunch["resumed_from_steps"] == steps_at_stop
    assert (tmp_path / "cut" / "success_by_delay.png").is_file()
    assert (tmp_path / "cut" / "success_by_delay.md").is_file()
    assert_nothing_left(started, tmp_path)
