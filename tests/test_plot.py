import csv
import math

import pytest

from nalu_rl.cli import run_cli
from nalu_rl.figures import curves_over_seeds, markdown_table, read_success_rows, set_delay_axis
from nalu_rl.plot import main
from nalu_rl.stats import wilson_interval

COLUMNS = ("agent", "delay", "episodes", "successes", "success_rate", "ceiling", "ci_low", "ci_high")


def write_csv(path, agent, successes_by_delay, episodes=200):
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        for delay, successes in successes_by_delay.items():
            low, high = wilson_interval(successes, episodes)
            writer.writerow(
                {
                    "agent": agent,
                    "delay": delay,
                    "episodes": episodes,
                    "successes": successes,
                    "success_rate": successes / episodes,
                    "ceiling": 1.0,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return path


def test_plot_cli_writes_a_png_with_one_curve_per_agent(tmp_path):
    paths = [
        write_csv(tmp_path / "nac0.csv", "nac", {8: 190, 20: 150}),
        write_csv(tmp_path / "nac1.csv", "nac", {8: 180, 20: 170}),
        write_csv(tmp_path / "lstm0.csv", "lstm", {8: 195, 20: 0}),
    ]
    out = tmp_path / "figure" / "success.png"
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, [*map(str, paths), "-o", str(out), "--train-range", "5", "12"])
    assert exit_info.value.code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_rows_with_the_same_label_are_seeds_with_a_t_interval(tmp_path):
    rows = read_success_rows(
        [
            write_csv(tmp_path / "a.csv", "nac", {20: 150}),
            write_csv(tmp_path / "b.csv", "nac", {20: 170}),
            write_csv(tmp_path / "c.csv", "lstm", {20: 10}),
        ]
    )
    curves = curves_over_seeds(rows)
    (nac,) = curves["nac"]
    assert nac.seeds == 2
    assert nac.success_rate == pytest.approx(0.8)
    # Two seeds 0.75 and 0.85: sd = 0.0707, t(0.975, 1) = 12.706, half width = 12.706 * 0.05 = 0.635.
    assert nac.ci_low == pytest.approx(
        max(0.0, 0.8 - 12.706205 * 0.1 / math.sqrt(2) / math.sqrt(2)), abs=1e-4
    )
    assert nac.ci_high == 1.0
    (lstm,) = curves["lstm"]
    assert lstm.seeds == 1
    assert (lstm.ci_low, lstm.ci_high) == pytest.approx(wilson_interval(10, 200))


def test_markdown_table_has_a_row_per_delay_and_a_column_per_agent(tmp_path):
    rows = read_success_rows([write_csv(tmp_path / "a.csv", "nac", {5: 200, 6: 100})])
    table = markdown_table(curves_over_seeds(rows)).splitlines()
    assert table[0] == "| T | ceiling | nac |"
    assert table[3].startswith("| 6 | 1.000 | 0.50 [")
    assert len(table) == 4


def test_plot_cli_rejects_a_csv_without_the_columns(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, [str(bad), "-o", str(tmp_path / "x.png")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "missing columns" in error


def test_log_x_puts_the_delays_on_a_log_axis_and_the_default_stays_linear(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (linear, logarithmic) = plt.subplots(1, 2)
    set_delay_axis(linear, [1, 12, 1000])
    set_delay_axis(logarithmic, [1, 12, 1000], log_x=True)
    assert linear.get_xscale() == "linear" and linear.get_xlim() == (0.5, 1000.5)
    assert logarithmic.get_xscale() == "log"
    low, high = logarithmic.get_xlim()
    assert 0 < low < 1 and 1000 < high < 1300
    plt.close(figure)
    path = write_csv(tmp_path / "a.csv", "nac", {5: 200, 100: 190, 1000: 180})
    out = tmp_path / "log.png"
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, [str(path), "-o", str(out), "--log-x"])
    assert exit_info.value.code == 0 and out.read_bytes()[:4] == b"\x89PNG"


def test_the_delay_axis_says_what_t_is_in_the_task_when_told(tmp_path, monkeypatch):
    from nalu_rl import figures
    from nalu_rl.evaluation import delay_meaning

    drawn = []
    monkeypatch.setattr(figures, "save_figure", lambda figure, out_path: drawn.append(figure) or out_path)
    rows = read_success_rows([write_csv(tmp_path / "a.csv", "nac", {5: 200, 40: 150})])
    meaning = delay_meaning({"env_id": "nalu_rl/IntervalTiming-v0"})
    assert "light" in meaning and "stimulus" in delay_meaning({})  # {}: TimeTrack, the default env
    figures.plot_success_by_delay(rows, tmp_path / "told.png", delay_meaning=meaning)
    figures.plot_success_by_delay(rows, tmp_path / "untold.png")
    assert [figure.axes[0].get_xlabel() for figure in drawn] == [f"delay T ({meaning})", "delay T"]


@pytest.mark.parametrize(
    ("env_id", "says"), [("Nope-v0", "unknown --env-id"), ("CartPole-v1", "not a timing task")]
)
def test_plot_cli_refuses_an_env_id_that_is_not_a_timing_task(tmp_path, capsys, env_id, says):
    path = write_csv(tmp_path / "a.csv", "nac", {5: 200})
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, [str(path), "-o", str(tmp_path / "x.png"), "--env-id", env_id])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and says in error
