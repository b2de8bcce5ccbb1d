import numpy as np
import pytest
from conftest import TINY_ENV_KWARGS, cli_exit_code

from envs import TimeTrackEnv
from nalu_rl.render import main

ENV_KWARGS = TINY_ENV_KWARGS


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")


def run(argv):
    return cli_exit_code(main, argv)


def record_one_episode(checkpoint, out, delay):
    """Exit code of `render --record out` for one episode of delay `delay`."""
    argv = ["--checkpoint", str(checkpoint), "--record", str(out), "--episodes", "1", "--delay", str(delay)]
    return run(argv)


def test_record_writes_a_gif_whose_frames_show_the_grid(nac_checkpoint, tmp_path):
    import imageio.v3 as iio

    out = tmp_path / "episode.gif"
    assert record_one_episode(nac_checkpoint, out, delay=7) == 0
    frames = iio.imread(out, index=None)[..., :3]
    # An untrained agent times out or arrives: at least the first frame plus one step, at most T + slack + 1.
    assert 2 <= len(frames) <= 7 + 8 + 1
    assert frames.shape[1] >= 256 and frames.shape[2] >= 256
    expected_first = TimeTrackEnv(**ENV_KWARGS, delay_range=(7, 7), render_mode="rgb_array")
    expected_first.reset(seed=0)
    expected = expected_first.render()
    assert frames[0].shape == expected.shape
    # GIF palettes may shift a colour by a little; the picture (grid, agent, target, text) must match.
    assert np.mean(np.abs(frames[0].astype(int) - expected.astype(int)) > 16) < 0.01
    red_target = (frames[0, ..., 0] > 180) & (frames[0, ..., 1] < 80) & (frames[0, ..., 2] < 80)
    assert red_target.sum() > 100


def test_record_writes_an_mp4(nac_checkpoint, tmp_path):
    import imageio.v3 as iio

    out = tmp_path / "episode.mp4"
    assert record_one_episode(nac_checkpoint, out, delay=3) == 0
    frames = iio.imread(out, index=None)
    assert frames.ndim == 4 and frames.shape[1] >= 256 and len(frames) >= 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--checkpoint", "/nonexistent.pt", "--record", "x.gif"], "checkpoint not found"),
        (["--agent", "no-such-agent", "--record", "x.gif"], "no shipped checkpoint"),
        (["--checkpoint", "CKPT", "--record", "x.avi"], ".gif or .mp4"),
        (["--checkpoint", "CKPT", "--record", "/nonexistent/dir/x.gif"], "cannot write"),
        (["--checkpoint", "CKPT", "--record", "x.gif", "--delay", "0"], "--delay"),
    ],
)
def test_bad_input_ends_with_one_line_error(argv, message, nac_checkpoint, capsys):
    argv = [str(nac_checkpoint) if arg == "CKPT" else arg for arg in argv]
    assert run(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error


def test_window_mode_plays_the_episodes_headless(nac_checkpoint, capsys):
    assert run(["--checkpoint", str(nac_checkpoint), "--episodes", "2", "--delay", "3", "--fps", "500"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["episode 0", "episode 1"]
    assert all("T=3" in line for line in lines)
