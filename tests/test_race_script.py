"""scripts/race_recurrent_ppo.py: a run that fails ends the race with one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
