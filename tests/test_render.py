import numpy as np
import pytest
from conftest import TINY_ENV_KWARGS, cli_exit_code

from nalu_rl.envs import TimeTrackEnv
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
    # Below the env's picture, the nac agent's frames carry a caption: time left and its count.
    assert frames[0].shape[0] > expected.shape[0] and frames[0].shape[1:] == expected.shape[1:]
    top = frames[0][: expected.shape[0]]
    # GIF palettes may shift a colour by a little; the picture (grid, agent, target, text) must match.
    assert np.mean(np.abs(top.astype(int) - expected.astype(int)) > 16) < 0.01
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


def test_the_count_caption_reads_the_time_left_exactly_from_an_accumulator(nac_checkpoint):
    """A NAC accumulator fed the stimulus and a bias holds W_s T + W_b (t + 1), so the readout fitted
    on the training range reads T - t exactly at a delay far outside it."""
    from nalu_rl.checkpoint import load_agent
    from nalu_rl.playback import fit_time_left_readout
    from nalu_rl.state_probe import record_state_traces

    model, config = load_agent(nac_checkpoint)
    view, weights = fit_time_left_readout(model, config)
    assert view == "nac"
    (trace,) = record_state_traces(model, config, [60], episodes=1)
    readings = np.concatenate([trace.views[view], np.ones((trace.steps, 1))], axis=1) @ weights
    assert np.allclose(readings, 60 - np.arange(trace.steps), atol=1e-2)


def test_agents_without_a_counter_get_no_caption(lstm_checkpoint, tmp_path):
    import imageio.v3 as iio

    out = tmp_path / "episode.gif"
    assert record_one_episode(lstm_checkpoint, out, delay=7) == 0
    expected = TimeTrackEnv(**ENV_KWARGS, delay_range=(7, 7), render_mode="rgb_array")
    expected.reset(seed=0)
    assert iio.imread(out, index=None)[0].shape[:2] == expected.render().shape[:2]


def test_a_task_that_draws_no_frames_is_refused_in_one_line(tmp_path, capsys):
    from nalu_rl.agents import make_agent
    from nalu_rl.checkpoint import save_checkpoint
    from nalu_rl.envs import ReadySetGoEnv

    model = make_agent("lstm", ReadySetGoEnv().observation_space, num_actions=2)
    path = tmp_path / "ready-set-go.pt"
    config = {"agent": "lstm", "seed": 0, "env_id": "nalu_rl/ReadySetGo-v0", "env": {}}
    save_checkpoint(path, {"config": config, "model": model.state_dict()})
    assert run(["--checkpoint", str(path), "--record", str(tmp_path / "x.gif")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "draws no frames" in error and "evaluate" in error


def test_the_count_caption_reads_the_counter_alone():
    """Only a counter's state is read for the caption: not a GRU's, nor a separate critic's LSTM."""
    from nalu_rl.agents.model import make_agent
    from nalu_rl.playback import fit_time_left_readout

    space = TimeTrackEnv(**ENV_KWARGS).observation_space
    for model in (make_agent("gru", space), make_agent("lstm", space, critic_separate=True)):
        assert fit_time_left_readout(model, {}) is None
