import numpy as np
import pytest
from conftest import TINY_ENV_KWARGS, cli_exit_code

from nalu_rl.checkpoint import load_agent
from nalu_rl.counter import main
from nalu_rl.state_probe import (
    StateTrace,
    most_time_correlated_unit,
    record_state_traces,
    remaining_steps_readout,
)

ENV_KWARGS = TINY_ENV_KWARGS


def run(argv):
    return cli_exit_code(main, argv)


def test_counter_cli_writes_a_png(nac_checkpoint, tmp_path):
    out = tmp_path / "counter.png"
    assert (
        run(
            [
                "--checkpoint",
                str(nac_checkpoint),
                "-o",
                str(out),
                "--delays",
                "5,9,20",
                "--episodes",
                "2",
            ]
        )
        == 0
    )
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_traces_record_each_view_until_the_episode_ends(nac_checkpoint):
    model, config = load_agent(nac_checkpoint)
    traces = record_state_traces(model, config, [3, 15], episodes=3, seed=1)
    assert [trace.delay for trace in traces] == [3, 3, 3, 15, 15, 15]
    slack = 2 * (5 - 1)
    for trace in traces:
        assert set(trace.views) == set(model.state_names)
        assert 1 <= trace.steps <= trace.delay + slack + 1
        assert trace.outcome in {"success", "early", "late", "timeout"}
        assert trace.views["nac"].shape[1] == model.wiring.counter_size


def synthetic_traces(counter_outside):
    traces = []
    for delay in (5, 8, 12, 30):
        steps = np.arange(delay + 1, dtype=np.float64)
        remaining = delay - steps if 5 <= delay <= 12 or counter_outside else np.full_like(steps, 7.0)
        noise = np.random.default_rng(delay).normal(size=steps.shape)
        traces.append(StateTrace(delay, {"state": np.stack([noise, remaining], axis=1)}, "success"))
    return traces


def test_most_time_correlated_unit_finds_the_clock_unit():
    traces = []
    for delay in (5, 20):
        steps = np.arange(delay + 1, dtype=np.float64)
        noise = np.random.default_rng(delay).normal(size=steps.shape)
        traces.append(StateTrace(delay, {"state": np.stack([noise, 10 * noise, -0.5 * steps], axis=1)}, ""))
    unit, correlation = most_time_correlated_unit(traces, "state")
    assert unit == 2 and correlation == pytest.approx(-1.0)


def test_readout_is_fitted_on_the_training_range_only():
    exact = synthetic_traces(True)
    _, predictions = remaining_steps_readout(exact, "state", (5, 12))
    truth = np.concatenate([trace.delay - np.arange(trace.steps) for trace in exact])
    assert np.allclose(predictions, truth, atol=1e-6)
    # A state that stops counting beyond the training range: exact readout inside it, wrong outside.
    stalled = synthetic_traces(False)
    _, predictions = remaining_steps_readout(stalled, "state", (5, 12))
    inside = sum(trace.steps for trace in stalled if trace.delay <= 12)
    assert np.allclose(predictions[:inside], truth[:inside], atol=1e-6)
    assert np.abs(predictions[inside:] - truth[inside:]).mean() > 5


def test_bad_delays_end_with_one_line_error(nac_checkpoint, tmp_path, capsys):
    assert run(["--checkpoint", str(nac_checkpoint), "-o", str(tmp_path / "c.png"), "--delays", "x"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "delay spec" in error
