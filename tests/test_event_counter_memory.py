"""The event counter whose gates also read the memory core's h_t: stepped after the LSTM, the same
counter as without it when its weights on h_t are zero, and a way for the gates' gradient into the LSTM."""

from __future__ import annotations

from dataclasses import replace

import gymnasium
import numpy as np
import pytest
import torch

from nalu_rl.agents import ActorCritic
from nalu_rl.agents.catalog import LEARNED_COUNT

CUES = gymnasium.spaces.Dict({"cues": gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)})
READS_MEMORY = replace(LEARNED_COUNT, counter_inputs=("encoder", "stimulus", "memory"))


def _sequence(steps: int = 9, batch: int = 3) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    cues = torch.zeros(steps, batch, 2)
    cues[0, :, 0] = 1.0
    cues[4, :, 1] = 1.0
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[0] = True
    return {"cues": cues}, starts


def test_gates_that_read_the_memory_step_after_it_and_read_only_it_step_by_step() -> None:
    model = ActorCritic(CUES, 2, READS_MEMORY)
    counter = model.cores["count"]
    assert [core.signal for core in model.step_order] == ["memory", "count"]
    assert counter.stepwise_inputs == ("memory",) and counter.sequence_inputs == ("encoder", "stimulus")
    assert model.unrolled_alone == ()


def test_with_its_weights_on_the_memory_at_zero_it_is_the_counter_that_reads_the_observation_only() -> None:
    torch.manual_seed(0)
    plain = ActorCritic(CUES, 2, LEARNED_COUNT)
    reading = ActorCritic(CUES, 2, READS_MEMORY)
    width = plain.cores["count"].gate_input_width
    state = reading.state_dict()
    for name, value in plain.state_dict().items():
        if name.endswith("gate.linear.weight"):  # [observation columns, memory columns, phase columns]
            state[name] = torch.cat([value[:, :width], torch.zeros(value.shape[0], 128), value[:, width:]], 1)
        else:
            state[name] = value
    reading.load_state_dict(state)
    obs, starts = _sequence()
    with torch.no_grad():
        expected = plain(obs, starts, plain.initial_state(3))
        got = reading(obs, starts, reading.initial_state(3))
    for a, b in zip(expected[:2] + expected[2], got[:2] + got[2], strict=True):
        torch.testing.assert_close(a, b)


def test_the_gates_read_the_memory_and_pass_their_gradient_into_the_lstm() -> None:
    torch.manual_seed(0)
    model = ActorCritic(CUES, 2, replace(READS_MEMORY, actor_inputs=("count",), critic_inputs=("count",)))
    counter = model.cores["count"]
    width = counter.sequence_input_width
    with torch.no_grad():  # the gates read h_t only, strongly enough to flip with it
        for gate in (counter.phase_gate, counter.event_gate):
            gate.linear.weight.zero_()
            gate.linear.weight[:, width : width + 128] = 30.0 * torch.randn(gate.linear.out_features, 128)
            gate.linear.bias.zero_()
    obs, starts = _sequence()
    logits, value, state = model(obs, starts, model.initial_state(3))
    events = model.describe_state(state)["event_bits"]
    assert ((events == 0) | (events == 1)).all()
    (logits.sum() + value.sum()).backward()
    lstm_gradient = sum(weight.grad.abs().sum() for weight in model.cores["memory"].parameters())
    assert lstm_gradient > 0  # only the counter's gates connect the heads to the LSTM here


def test_the_memory_must_come_last_among_the_counters_inputs() -> None:
    with pytest.raises(ValueError, match="memory"):
        ActorCritic(CUES, 2, replace(LEARNED_COUNT, counter_inputs=("memory", "encoder")))
