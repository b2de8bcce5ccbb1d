"""The experimental segment timer (scripts/experiments/segment_timer.py): its registers are exact step
counts of the segments between changes of the frame, at T = 1000 as at T = 5."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

import nalu_rl.envs  # noqa: F401  (registers the tasks)
from nalu_rl.agents.model import ActorCritic

MODULE = Path(__file__).resolve().parents[1] / "scripts" / "experiments" / "segment_timer.py"


@pytest.fixture(scope="module")
def segment_timer():
    if "segment_timer" in sys.modules:
        return sys.modules["segment_timer"]
    spec = importlib.util.spec_from_file_location("segment_timer", MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["segment_timer"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("delay", [5, 1000])
def test_the_registers_count_the_steps_between_the_cues_of_ready_set_go_exactly(segment_timer, delay) -> None:
    env = gymnasium.make("nalu_rl/ReadySetGo-v0")
    model = ActorCritic(env.observation_space, (2,), segment_timer.SEGMENT_TIMER, "segment-timer").eval()
    phase_at, steps_at = model.state_names.index("segment_phase"), model.state_names.index("segment_steps")
    observation, _ = env.reset(seed=0, options={"delay": delay})
    state, start = model.initial_state(1), True
    for t in range(2 * delay + 1):  # waiting until the press is due, at observation 2T
        obs = {key: torch.as_tensor(np.asarray(value))[None, None] for key, value in observation.items()}
        with torch.no_grad():
            _, _, state = model(obs, torch.tensor([[start]]), state)
        start = False
        if t < 2 * delay:
            observation, _, terminated, _, _ = env.step(0)
            assert not terminated
    # "ready" at 0 ends segment 0 as it goes off (step 1), "set" at T opens segment 2 and closes it at
    # T + 1: segments of 1, T - 1, 1 and, at the due observation 2T, T steps.
    assert state[phase_at][0].tolist() == [0.0, 0.0, 0.0, 1.0] + [0.0] * 4
    assert state[steps_at][0].tolist() == [1.0, delay - 1.0, 1.0, float(delay)] + [0.0] * 4


def test_the_comparisons_are_the_clamped_differences_at_each_gain(segment_timer) -> None:
    core = segment_timer.SegmentTimerCore(("encoder",), {"encoder": 2}, 1, segment_timer.SEGMENT_TIMER)
    steps = torch.zeros(1, core.registers)
    steps[0, 1], steps[0, 3] = 999.0, 1000.0
    features = core.compare(steps)[0]
    n = core.registers
    first_gain = features[: n * (n - 1)].view(n, n - 1)  # row i: R_j - R_i for j != i
    assert first_gain[1, 2].item() == pytest.approx(1 / core.CLIPS[0])  # R_3 - R_1 = 1, scaled by the clamp
    assert first_gain[3, 1].item() == pytest.approx(-1 / core.CLIPS[0])  # R_1 - R_3 = -1
    assert first_gain[3, 0].item() == -1.0  # R_0 - R_3 = -1000, clamped
    second_gain = features[n * (n - 1) : 2 * n * (n - 1)].view(n, n - 1)
    assert second_gain[1, 2].item() == -1.0  # R_3 - 2 R_1 = -998, clamped
    assert features.abs().max().item() <= 1.0 and features.shape[0] == core.comparisons


def test_the_wide_core_reads_each_comparison_clamped_at_3_and_at_10(segment_timer) -> None:
    core = segment_timer.WideSegmentTimerCore(("encoder",), {"encoder": 2}, 1, segment_timer.SEGMENT_TIMER)
    steps = torch.zeros(1, core.registers)
    steps[0, 1] = 6.0  # R_1 - R_0 = 6: past the clamp at 3, inside the one at 10
    features = core.compare(steps)[0]
    at_3, at_10 = features.chunk(2)
    n = core.registers
    assert at_3[: n * (n - 1)].view(n, n - 1)[0, 0].item() == 1.0
    assert at_10[: n * (n - 1)].view(n, n - 1)[0, 0].item() == pytest.approx(0.6)
    assert features.shape[0] == core.comparisons == 2 * (n * (n - 1) * len(core.GAINS) + n)
