"""scripts/seed_table.py compares each seed with the ceiling exactly, from the committed CSVs."""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from nalu_rl.envs.rules import success_ceiling, success_ceiling_exact

REPOSITORY = Path(__file__).resolve().parents[1]
DATA = REPOSITORY / "docs" / "data"


def load_seed_table():
    spec = importlib.util.spec_from_file_location("seed_table", REPOSITORY / "scripts" / "seed_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


seed_table = load_seed_table()


def write_csv(path: Path, rows: list[tuple[int, int, int]], size: int = 5) -> Path:
    lines = ["agent,delay,episodes,successes,success_rate,ceiling"]
    for delay, episodes, successes in rows:
        ceiling = float(success_ceiling_exact(delay, size))
        lines.append(f"x,{delay},{episodes},{successes},{successes / episodes:.6g},{ceiling:.6f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_exact_ceiling_at_t6_is_29_of_30_and_the_float_is_its_rounding():
    assert success_ceiling_exact(6) == Fraction(29, 30)
    assert success_ceiling(6) == float(Fraction(29, 30))


def test_174_of_200_at_t6_is_exactly_the_hold_and_does_not_fall_below(tmp_path):
    # 174/200 = 0.87 = 0.9 x 29/30: through floats 0.87 / 0.966667 reads 0.8999997 and falls below.
    assert Fraction(174, 200) == Fraction(9, 10) * Fraction(29, 30)
    assert 0.87 / 0.966667 < 0.9
    rows = [(delay, 200, 200) for delay in range(8, 13)]
    at_hold = seed_table.summarize_seed(write_csv(tmp_path / "seed0.csv", [(6, 200, 174), *rows]))
    assert at_hold.first_below is None
    assert at_hold.lowest_fraction == Fraction(9, 10)
    one_less = seed_table.summarize_seed(write_csv(tmp_path / "seed1.csv", [(6, 200, 173), *rows]))
    assert one_less.first_below == 6


def test_ungated_ablation_holds_in_4_of_5_seeds_of_each_agent():
    for agent in ("signed-count", "nau-saturated-count"):
        paths = sorted((DATA / "symbolic" / "ungated-unit-lr10" / agent).glob("seed*.csv"))
        assert len(paths) == 5
        summaries = [seed_table.summarize_seed(path) for path in paths]
        holding = [summary.seed for summary in summaries if summary.first_below is None]
        assert holding == ["1", "2", "3", "4"], agent


def test_symbolic_lstm_seed4_first_falls_below_at_t14_not_at_t6():
    summary = seed_table.summarize_seed(DATA / "symbolic" / "lstm" / "seed4.csv")
    assert summary.success_rates[6] == Fraction(174, 200)
    assert summary.first_below == 14


def test_the_script_prints_the_count_of_holding_seeds(capsys):
    paths = sorted((DATA / "symbolic" / "ungated-unit-lr10" / "signed-count").glob("seed*.csv"))
    assert seed_table.main([str(path) for path in paths]) == 0
    assert "4 of 5 seeds hold >= 0.9 of the ceiling" in capsys.readouterr().out


def test_a_csv_from_another_grid_size_is_refused_in_one_line(tmp_path, capsys):
    path = write_csv(tmp_path / "seed0.csv", [(delay, 200, 100) for delay in range(1, 13)], size=4)
    with pytest.raises(SystemExit) as exit_info:
        seed_table.main([str(path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert "--size" in error and "\n" not in error
    seed_table.main([str(path), "--size", "4"])


def test_highest_success_from_t20_finds_the_symbolic_lru_seeds_that_are_not_at_zero():
    rates = {
        seed: seed_table.summarize_seed(DATA / "symbolic" / "lru" / f"seed{seed}.csv").success_rates
        for seed in range(5)
    }
    highest = {seed: seed_table.highest_from(rates[seed], 20) for seed in range(5)}
    assert highest == {
        0: "0.000 (T = 20)",
        1: "0.000 (T = 20)",
        2: "0.000 (T = 20)",
        3: "0.015 (T = 34)",
        4: "0.015 (T = 80)",
    }
    assert rates[3][40] == Fraction(1, 200)


def test_a_cue_task_has_a_ceiling_of_one_at_every_delay(tmp_path):
    ceiling = seed_table.task_ceiling("nalu_rl/ReadySetGo-v0")
    assert ceiling(5) == ceiling(1000) == Fraction(1)
    lines = [
        "agent,delay,episodes,successes,success_rate,ceiling",
        "x,5,100,95,0.95,1.0",
        "x,20,100,89,0.89,1.0",
    ]
    path = tmp_path / "seed0.csv"
    path.write_text("\n".join(lines) + "\n")
    summary = seed_table.summarize_seed(path, hold_span=(13, 1000), ceiling=ceiling)
    assert summary.first_below == 20
