"""scripts/outcomes_by_delay.py: the outcome counts of a shipped checkpoint, sampled and greedy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "outcomes_by_delay.py"


def test_outcomes_add_up_to_the_episodes_of_each_delay_in_both_modes() -> None:
    command = [sys.executable, str(SCRIPT), "--agent", "signed-count", "--delays", "6,40", "--episodes", "30"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    rows = [line.strip("|").split("|") for line in finished.stdout.splitlines() if line.startswith("| s")]
    rows += [line.strip("|").split("|") for line in finished.stdout.splitlines() if line.startswith("| g")]
    assert [(mode.strip(), int(delay)) for mode, delay, *_ in rows] == [
        ("sampled", 6), ("sampled", 40), ("greedy", 6), ("greedy", 40)
    ]  # fmt: skip
    for _, _, rate, outcomes in rows:
        counts = {name: int(count) for name, count in (part.split() for part in outcomes.split(","))}
        assert sum(counts.values()) == 30
        assert float(rate) == round(counts.get("success", 0) / 30, 3)
