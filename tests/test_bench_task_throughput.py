"""scripts/bench_task_throughput.py: training SPS per task, with its ratio to TimeTrack symbolic's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_task_throughput.py"


@pytest.mark.slow
def test_each_task_gets_its_sps_and_a_ratio_to_timetrack_per_round() -> None:
    command = [
        sys.executable, str(SCRIPT), "--steps", "3000", "--rounds", "1", "--tasks", "nalu_rl/ReadySetGo-v0",
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    rows = {
        line.split()[0]: line.split()[1:]
        for line in finished.stdout.splitlines()
        if line.startswith("nalu_rl/")
    }
    assert set(rows) == {"nalu_rl/TimeTrack-v0", "nalu_rl/ReadySetGo-v0"}
    assert rows["nalu_rl/TimeTrack-v0"][1] == "1.00"
    assert float(rows["nalu_rl/ReadySetGo-v0"][0].replace(",", "")) > 0


def test_a_step_budget_below_one_is_refused_with_exit_2() -> None:
    finished = subprocess.run([sys.executable, str(SCRIPT), "--steps", "0"], capture_output=True, text=True)
    assert finished.returncode == 2 and "--steps" in finished.stderr
