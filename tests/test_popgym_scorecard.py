"""scripts/popgym_scorecard.py: run folders -> per-run CSVs -> MMER per agent and task with its interval."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nalu_rl.checkpoint import CHECKPOINT_FORMAT
from nalu_rl.stats import t_interval

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "popgym_scorecard.py"


def load_script():
    spec = importlib.util.spec_from_file_location("popgym_scorecard", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_run(folder: Path, env_id: str, agent: str, seed: int, mmer: float | None, steps: int = 640) -> None:
    """A run folder as train leaves it (without TensorBoard events)."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"env_id": env_id, "agent": agent, "seed": seed}))
    status = {"state": "finished", "steps": steps, "total_steps": 640}
    status["mmer"] = None if mmer is None else {"value": mmer, "complete_epochs": 0}
    (folder / "run_status.json").write_text(json.dumps(status))


def test_collected_runs_are_scored_per_agent_and_task_with_a_t_interval(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for seed, mmer in enumerate([0.95, 0.91, 0.5]):
        write_run(
            runs / "sweep" / f"trial-{seed}" / "run", "popgym-CountRecallEasy-v0", "value-count", seed, mmer
        )
    write_run(runs / "lstm", "popgym-CountRecallEasy-v0", "lstm", 0, -0.7, steps=320)
    write_run(runs / "timing", "nalu_rl/TimeTrack-v0", "lstm", 0, None)  # not POPGym: left out
    data = tmp_path / "data"
    scorecard = load_script()
    assert scorecard.collect([runs], data) == 4
    assert (data / "value-count-CountRecallEasy-seed2.csv").exists()
    rows = {row["agent"]: row for row in scorecard.score(scorecard.read_runs(data), data)}
    assert rows["value-count"]["values"] == [0.95, 0.91, 0.5]
    assert rows["value-count"]["interval"] == pytest.approx(t_interval([0.95, 0.91, 0.5]))
    assert rows["lstm"]["interval"] is None and rows["lstm"]["unfinished"] == 1
    table = scorecard.markdown(scorecard.score(scorecard.read_runs(data), data))
    assert "| CountRecallEasy | value-count | 3 |" in table and "| 2 of 3 |" in table
    assert "320 (1 unfinished)" in table
    # The first step at >= 0.9 comes from each run's curve (no curve points here: none).
    curve = data / "value-count-CountRecallEasy-seed0.csv"
    curve.write_text("step,episode_return,mmer\n100,0.5,0.5\n200,0.92,0.91\n300,0.95,0.95\n")
    assert scorecard.first_step_at(curve) == 200
    # A run whose critic had a core of its own (its checkpoint's wiring) is scored apart.
    separate = runs / "lstm-separate"
    write_run(separate, "popgym-CountRecallEasy-v0", "lstm", 0, -0.5)
    wiring = {"critic_separate": True}
    torch.save(
        {"format": CHECKPOINT_FORMAT, "config": {}, "model": {}, "wiring": wiring}, separate / "checkpoint.pt"
    )
    assert scorecard.collect([separate], data) == 1
    rows = {row["agent"]: row for row in scorecard.score(scorecard.read_runs(data), data)}
    assert rows["lstm+separate-critic"]["values"] == [-0.5] and rows["lstm"]["values"] == [-0.7]
    # Collecting again replaces a run's row instead of adding one.
    assert scorecard.collect([runs / "lstm"], data) == 1
    assert len(scorecard.read_runs(data)) == 5


def test_without_runs_or_with_a_missing_folder_it_exits_2_with_one_line(tmp_path: Path) -> None:
    for argv in ([str(tmp_path)], [str(tmp_path), "--collect", str(tmp_path / "missing")]):
        finished = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True)
        assert finished.returncode == 2 and "Traceback" not in finished.stderr
        assert finished.stderr.strip().splitlines()[-1].startswith("popgym_scorecard.py: error:")
