"""scripts/race_recurrent_ppo.py: a run that fails ends the race with one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "race_recurrent_ppo.py"


def test_a_bad_nalu_option_ends_the_race_with_trains_one_line_error_and_no_data(tmp_path: Path) -> None:
    command = [
        sys.executable, str(SCRIPT), "--envs", "cartpole", "--systems", "nalu_rl", "--seeds", "0",
        "--budget-s", "5", "--nalu-options", "--bogus-option 3", "--data-dir", str(tmp_path / "race"),
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 1
    assert "Traceback" not in finished.stderr
    assert finished.stderr.strip().splitlines() == [
        "race_recurrent_ppo.py: cartpole seed 0: nalu_rl.train failed (exit 2): "
        "error: unrecognized arguments: --bogus-option 3"
    ]
    assert not (tmp_path / "race").exists()


@pytest.mark.slow
def test_nalu_rl_races_a_popgym_easy_task_and_writes_its_curve(tmp_path: Path) -> None:
    pytest.importorskip("popgym")
    command = [
        sys.executable, str(SCRIPT), "--envs", "repeatprevious", "--systems", "nalu_rl", "--seeds", "0",
        "--budget-s", "15", "--data-dir", str(tmp_path / "race"),
        # One learner thread: a learner on every core crawls on a machine shared with other tests
        # (PERFORMANCE, "Two trainings at once on 2 cores").
        "--nalu-options", "--learner-threads 1",
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert finished.returncode == 0, finished.stderr
    curve = (tmp_path / "race" / "repeatprevious" / "nalu_rl" / "seed0.csv").read_text().splitlines()
    assert curve[0] == "steps,seconds,episode_return" and len(curve) > 1
    returns = [float(line.split(",")[2]) for line in curve[1:]]
    assert all(-1.0 <= value <= 1.0 for value in returns)  # POPGym's returns lie in [-1, 1]


def test_the_table_counts_the_seeds_within_twice_the_peers_steps(tmp_path: Path) -> None:
    # Seed 0 reaches the peer's final return at 2x its steps, seed 1 at 3x: one of two within 2x.
    for seed, own_steps in ((0, 2000), (1, 3000)):
        for system, rows in (
            ("recurrent_ppo", [(500, -0.5), (1000, 0.2)]),
            ("nalu_rl", [(1000, -0.5), (own_steps, 0.25)]),
        ):
            path = tmp_path / "repeatprevious" / system / f"seed{seed}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = ["steps,seconds,episode_return", *(f"{steps},1.0,{value}" for steps, value in rows)]
            path.write_text("\n".join(lines) + "\n")
    finished = subprocess.run(
        [sys.executable, str(SCRIPT), "--table", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 0, finished.stderr
    mean_row = next(line for line in finished.stdout.splitlines() if "| mean |" in line)
    assert mean_row.endswith("2.5 [-3.85, 8.85] (1 of 2 within 2x) |"), mean_row
