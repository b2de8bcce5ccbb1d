"""`python -m nalu_rl.bench`: the scorecard's arithmetic from per-seed CSVs, the protocol's seeds and
delays, bad input in one line, and a tiny benchmark run on a local Ray that scores, resumes and
re-evaluates a trial whose CSV is gone."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import nalu_rl.bench.plan as bench_plan
from nalu_rl.bench.__main__ import main as bench_main
from nalu_rl.bench.protocol import (
    FULL_PROTOCOL,
    QUICK_PROTOCOL,
    evaluation_seed,
    seeds_needed_to_hold,
)
from nalu_rl.bench.scorecard import read_seed_results, score_rows, seed_csv_path, write_scorecard
from nalu_rl.cli import run_cli
from nalu_rl.evaluation import CSV_COLUMNS

LOW_HIGH = (0.0, 1.0)


def write_seed_csv(path: Path, agent: str, rates: dict[int, float], ceiling: float = 1.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(CSV_COLUMNS)]
    for delay, rate in sorted(rates.items()):
        successes = round(rate * 200)
        lines.append(f"{agent},{delay},200,{successes},{successes / 200},{ceiling},0.0,1.0")
    path.write_text("\n".join(lines) + "\n")


def rates(in_range: float, far: float, fail_from: int | None = None) -> dict[int, float]:
    """Success at every delay of the full protocol: `in_range` on 5..12, `far` beyond, 0 from
    `fail_from` on."""
    values = {}
    for delay in FULL_PROTOCOL.delays:
        value = in_range if delay <= 12 else far
        values[delay] = 0.0 if fail_from is not None and delay >= fail_from else value
    return values


def test_holding_needs_four_of_five_seeds_and_three_of_three() -> None:
    assert [seeds_needed_to_hold(n) for n in (1, 2, 3, 4, 5, 10)] == [1, 2, 3, 4, 4, 8]


def test_evaluation_seeds_are_apart_from_training_seeds() -> None:
    assert all(evaluation_seed(seed) not in range(1000) for seed in range(1000))


def test_scorecard_of_five_seeds_reads_range_far_holds_and_score(tmp_path: Path) -> None:
    # Four seeds hold to 1000; the fifth fails from 50: "holds to" is 1000 (4 of 5).
    for seed in range(4):
        write_seed_csv(seed_csv_path(tmp_path, "Task", "counter", seed), "counter", rates(1.0, 1.0))
    write_seed_csv(seed_csv_path(tmp_path, "Task", "counter", 4), "counter", rates(1.0, 1.0, fail_from=50))
    # An LSTM-like agent: learns the range, nothing beyond.
    for seed in range(3):
        write_seed_csv(seed_csv_path(tmp_path, "Task", "lstm", seed), "lstm", rates(0.95, 0.0))
    rows = {row.agent: row for row in score_rows(read_seed_results(tmp_path), FULL_PROTOCOL)}
    counter, lstm = rows["counter"], rows["lstm"]
    assert counter.seeds == 5 and counter.holds_to == 1000
    assert counter.in_range[0] == pytest.approx(1.0)
    # The fifth seed scores 2 of 7 far delays (13, 20): the mean score is (4 + 2/7) / 5.
    assert counter.score[0] == pytest.approx((4 + 2 / 7) / 5)
    assert counter.score[1] < counter.score[0] < counter.score[2]
    assert counter.far_fractions[50] == pytest.approx(0.8)
    assert lstm.holds_to == 12 and lstm.score[0] == pytest.approx(0.0)
    assert lstm.in_range[0] == pytest.approx(0.95)


def test_two_failing_seeds_of_five_cut_holds_to_where_the_second_fails(tmp_path: Path) -> None:
    for seed in range(3):
        write_seed_csv(seed_csv_path(tmp_path, "Task", "a", seed), "a", rates(1.0, 1.0))
    write_seed_csv(seed_csv_path(tmp_path, "Task", "a", 3), "a", rates(1.0, 1.0, fail_from=200))
    write_seed_csv(seed_csv_path(tmp_path, "Task", "a", 4), "a", rates(1.0, 1.0, fail_from=50))
    (row,) = score_rows(read_seed_results(tmp_path), FULL_PROTOCOL)
    assert row.holds_to == 100  # the fourth best seed holds to 100


def test_fraction_is_of_the_ceiling_and_below_point_nine_in_range_holds_nowhere(tmp_path: Path) -> None:
    write_seed_csv(seed_csv_path(tmp_path, "Grid", "a", 0), "a", rates(0.45, 0.45), ceiling=0.5)
    write_seed_csv(seed_csv_path(tmp_path, "Grid", "b", 0), "b", rates(0.85, 0.85))
    rows = {row.agent: row for row in score_rows(read_seed_results(tmp_path), FULL_PROTOCOL)}
    assert rows["a"].in_range[0] == pytest.approx(0.9) and rows["a"].holds_to == 1000
    assert rows["b"].holds_to == 0


def test_scorecard_files_hold_every_row(tmp_path: Path) -> None:
    for task in ("One", "Two"):
        for seed in range(2):
            write_seed_csv(seed_csv_path(tmp_path, task, "a", seed), "a", rates(1.0, 0.5))
    rows = score_rows(read_seed_results(tmp_path), FULL_PROTOCOL)
    csv_path, markdown_path = write_scorecard(rows, FULL_PROTOCOL, tmp_path / "out")
    assert len(csv_path.read_text().splitlines()) == 3
    table = markdown_path.read_text()
    assert "| One | a | 2 |" in table and "| Two | a | 2 |" in table


def test_scorecard_option_writes_the_table_and_figure_from_committed_csvs(tmp_path: Path, capsys) -> None:
    write_seed_csv(seed_csv_path(tmp_path, "Task", "a", 0), "a", rates(1.0, 1.0))
    assert bench_main(["--scorecard", str(tmp_path)]) == 0
    assert (tmp_path / "scorecard.png").stat().st_size > 0
    assert "| Task | a | 1 |" in capsys.readouterr().out


class NoDueTimeEnv(gymnasium.Env):
    """A timing-task look-alike without due_time."""

    metadata = {"task_options": ("delay_range",), "render_modes": []}
    observation_space = gymnasium.spaces.Box(0, 1, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)
    delay_range = (5, 12)
    max_delay = 1000

    def success_ceiling(self, delay: int) -> float:
        return 1.0


if "bench_test/NoDueTime-v0" not in gymnasium.registry:
    gymnasium.register("bench_test/NoDueTime-v0", entry_point=NoDueTimeEnv)

BAD_INPUTS = {
    "unknown task": (["--tasks", "NoSuchTask-v0"], "unknown --env-id"),
    "not a timing task": (["--tasks", "CartPole-v1"], "not a timing task"),
    "no due_time": (["--tasks", "bench_test/NoDueTime-v0"], "no due_time"),
    "unknown agent": (["--agents", "no-such-agent", "--tasks", "TimeTrack"], "unknown agent"),
    "bad seeds": (["--seeds", "x", "--tasks", "TimeTrack"], "--seeds"),
    "resume without a run": (["--resume", "--name", "none"], "no benchmark run to resume"),
    "scorecard of nothing": (["--scorecard", "no/such/folder"], "no results folder"),
    "no concurrency": (["--tasks", "TimeTrack", "--max-concurrent", "0"], "--max-concurrent"),
}


@pytest.mark.parametrize(("argv", "message"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_one_line_exit_2_and_trains_nothing(tmp_path: Path, capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(bench_main, [*argv, "--root", str(tmp_path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and message in error
    assert not list(tmp_path.glob("*/trials/*"))


@pytest.mark.slow
def test_a_tiny_benchmark_scores_resumes_and_re_evaluates_a_lost_csv(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("ray.tune")
    tiny = dataclasses.replace(QUICK_PROTOCOL, budget_steps=3000, episodes=4, far_delays=(20,))
    monkeypatch.setattr(bench_plan, "QUICK_PROTOCOL", tiny)
    one_process = bench_plan.trial_train_options
    monkeypatch.setattr(
        bench_plan,
        "trial_train_options",
        lambda plan, agent, env_id: [*one_process(plan, agent, env_id), "--actors", "0"],
    )
    argv = ["--quick", "--tasks", "TimeTrack", "--seeds", "0-1", "--root", str(tmp_path), "--name", "t"]
    assert bench_main(argv) == 0
    folder = tmp_path / "t"
    csvs = sorted((folder / "results" / "TimeTrack").glob("*.csv"))
    assert [path.name for path in csvs] == ["lstm-seed0.csv", "lstm-seed1.csv"]
    delays = [int(line.split(",")[1]) for line in csvs[0].read_text().splitlines()[1:]]
    assert delays == [5, 12, 20]
    assert json.loads((folder / "bench.json").read_text())["protocol"]["budget_steps"] == 3000
    assert "| TimeTrack | lstm | 2 |" in (folder / "scorecard.md").read_text()
    # A lost CSV of a finished trial is evaluated again on --resume, without training it again.
    before = csvs[1].read_text()
    csvs[1].unlink()
    history = folder / "trials" / "lstm-TimeTrack-seed1" / "sweep_history.jsonl"
    launches = history.read_text().count('"launch"')
    assert bench_main(["--resume", "--name", "t", "--root", str(tmp_path)]) == 0
    assert csvs[1].read_text() == before  # the evaluation seed makes it the same episodes
    assert history.read_text().count('"launch"') == launches


if "bench_test/UsersTask-v0" not in gymnasium.registry:
    gymnasium.register(
        "bench_test/UsersTask-v0",
        entry_point="nalu_rl.envs.ready_set_go:ReadySetGoEnv",
        vector_entry_point="nalu_rl.envs.ready_set_go:ReadySetGoVectorEnv",
    )


def test_a_users_timing_task_joins_the_grid_under_its_id(tmp_path: Path) -> None:
    from nalu_rl.bench.__main__ import build_parser

    args = build_parser().parse_args(
        ["--tasks", "bench_test/UsersTask-v0", "TimeTrack", "--agents", "lstm", "--root", str(tmp_path)]
    )
    plan = bench_plan.plan_bench(args)
    specs = bench_plan.make_trial_specs(plan)
    assert [spec.name for spec in specs] == [
        f"lstm-{task}-seed{seed}" for seed in range(5) for task in ("bench_test-UsersTask-v0", "TimeTrack")
    ]
    users, grid = specs[0], specs[1]
    assert users.obs is None and grid.obs == "symbolic"  # symbolic where a task has pixels too
    assert bench_plan.result_csv(plan, users) == plan.results / "bench_test-UsersTask-v0" / "lstm-seed0.csv"
    assert "--total-steps" in users.train_options
    assert users.train_options[users.train_options.index("--total-steps") + 1] == "10000000"


def test_a_trial_whose_csv_is_in_the_results_folder_counts_as_done(tmp_path: Path) -> None:
    from nalu_rl.bench.__main__ import build_parser

    committed = tmp_path / "committed"
    write_seed_csv(seed_csv_path(committed, "TimeTrack", "lstm", 0), "lstm", rates(1.0, 0.0))
    argv = ["--tasks", "TimeTrack", "--agents", "lstm", "--seeds", "0-1", "--root", str(tmp_path / "runs")]
    plan = bench_plan.plan_bench(build_parser().parse_args([*argv, "--results", str(committed)]))
    done = [bench_plan.result_csv(plan, spec).exists() for spec in bench_plan.make_trial_specs(plan)]
    assert done == [True, False]
    plan.write_bench_file()
    assert json.loads((plan.folder / "bench.json").read_text())["results"] == str(committed.absolute())


def test_the_scorecard_figure_draws_each_agent_in_one_colour_on_every_panel(
    tmp_path: Path, monkeypatch
) -> None:
    import matplotlib.axes

    from nalu_rl.bench.figure import plot_scorecard

    write_seed_csv(seed_csv_path(tmp_path, "One", "b", 0), "b", rates(1.0, 0.0))
    for agent in ("a", "b"):
        write_seed_csv(seed_csv_path(tmp_path, "Two", agent, 0), agent, rates(1.0, 1.0))
    seed_results = read_seed_results(tmp_path)
    drawn: list[str] = []
    original_plot = matplotlib.axes.Axes.plot

    def recording_plot(axes, *args, **kwargs):
        drawn.append(kwargs.get("color"))
        return original_plot(axes, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", recording_plot)
    plot_scorecard(score_rows(seed_results, FULL_PROTOCOL), seed_results, FULL_PROTOCOL, tmp_path / "s.png")
    curves = [color for color in drawn if color is not None]
    assert curves == ["C1", "C0", "C1"]  # panel One: b; panel Two: a, b; b keeps its colour
