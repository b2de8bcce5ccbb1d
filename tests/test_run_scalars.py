from pathlib import Path

from torch.utils.tensorboard import SummaryWriter

from nalu_rl.run_scalars import read_rows, read_series


def write_log(folder: Path) -> None:
    writer = SummaryWriter(str(folder))
    for step, value in ((100, 1.0), (200, 2.5), (300, 4.0)):
        writer.add_scalar("charts/episode_return", value, step)
    writer.add_scalar("loss/value", 0.5, 200)
    writer.close()


def test_series_hold_every_point_of_the_tags_asked_for_that_the_run_logged(tmp_path: Path) -> None:
    write_log(tmp_path)
    series = read_series(tmp_path, ["charts/episode_return", "charts/not_logged"])
    assert list(series) == ["charts/episode_return"]
    assert [(point.step, point.value) for point in series["charts/episode_return"]] == [
        (100, 1.0),
        (200, 2.5),
        (300, 4.0),
    ]
    assert all(point.wall_time > 0 for point in series["charts/episode_return"])
    assert sorted(read_series(tmp_path)) == ["charts/episode_return", "loss/value"]


def test_rows_by_step_leave_out_a_tag_not_logged_at_that_step(tmp_path: Path) -> None:
    write_log(tmp_path)
    rows = read_rows(tmp_path, ["charts/episode_return", "loss/value"])
    assert rows == {
        100: {"charts/episode_return": 1.0},
        200: {"charts/episode_return": 2.5, "loss/value": 0.5},
        300: {"charts/episode_return": 4.0},
    }
    assert list(rows) == [100, 200, 300]


def test_a_folder_without_logs_reads_as_no_scalars(tmp_path: Path) -> None:
    assert read_series(tmp_path) == {} and read_rows(tmp_path, ["charts/episode_return"]) == {}
