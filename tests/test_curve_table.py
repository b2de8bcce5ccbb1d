"""scripts/curve_table.py: the last point of each seed's curve and the mean over seeds, per agent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]


def load_curve_table():
    spec = importlib.util.spec_from_file_location("curve_table", REPOSITORY / "scripts" / "curve_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


curve_table = load_curve_table()


def write_curve(path: Path, last_success: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["steps,success_rate,episode_return", "100,0.1,0.1", f"200,{last_success},{last_success / 2}"]
    path.write_text("\n".join(rows) + "\n")


def test_each_agent_folder_of_seed_csvs_gives_its_seeds_and_their_mean_and_other_folders_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_curve(tmp_path / "lstm" / "seed0.csv", 0.4)
    write_curve(tmp_path / "lstm" / "seed1.csv", 0.6)
    write_curve(tmp_path / "gru" / "seed0.csv", 0.7)  # one seed: no interval
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "lstm-seed0.final.txt").write_text("a run's last line\n")
    assert curve_table.main([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "| lstm | 1 | 200 | 0.600 | 0.300 |" in lines
    mean_line = next(line for line in lines if line.startswith("| lstm | mean of 2"))
    assert mean_line.split("|")[4].strip().startswith("0.500 [")  # the mean of 0.4 and 0.6, an interval
    assert "| gru | mean of 1 | | 0.700 | 0.350 |" in lines
    assert not any("logs" in line for line in lines)


def test_a_folder_without_seed_csvs_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert curve_table.main([str(tmp_path)]) == 2
    assert curve_table.main([str(tmp_path / "missing")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2


def test_reach_gives_the_first_step_at_the_success_rate_and_counts_the_seeds_that_never_got_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_curve(tmp_path / "lstm" / "seed0.csv", 0.9)  # 0.1 at step 100, 0.9 at 200
    write_curve(tmp_path / "lstm" / "seed1.csv", 0.5)  # never 0.9
    assert curve_table.main([str(tmp_path), "--reach", "0.9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("| steps to success >= 0.9 | lowest success after |")
    assert "| lstm | 0 | 200 | 0.900 | 0.450 | 200 | 0.900 |" in lines
    assert "| lstm | 1 | 200 | 0.500 | 0.250 | never | - |" in lines
    assert next(line for line in lines if "mean of 2" in line).endswith("| 200 (1 of 2 reached it) | 0.900 |")


def test_the_lowest_success_after_reaching_counts_only_the_points_from_there_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lstm" / "seed0.csv"
    path.parent.mkdir(parents=True)
    rows = ["steps,success_rate,episode_return", "100,0.2,0", "200,0.95,0", "300,0.7,0", "400,0.99,0"]
    path.write_text("\n".join(rows) + "\n")
    assert curve_table.main([str(tmp_path), "--reach", "0.9"]) == 0
    assert "| lstm | 0 | 400 | 0.990 | 0.000 | 200 | 0.700 |" in capsys.readouterr().out.splitlines()


def test_step_labels_are_short() -> None:
    labels = [curve_table.steps_label(steps) for steps in (0, 500, 100_000, 1_500_000)]
    assert labels == ["0", "500", "100k", "1.5M"]
