"""The recurrent wrapper: h_t = unit([x_t, h_{t-1}]), with per-step state resets."""

from __future__ import annotations

import pytest
import torch

from nalu_rl import NAU, RecurrentUnit


def _accumulator(unit: str = "nau") -> RecurrentUnit:
    """A one-number accumulator h_t = h_{t-1} + x_t with hand-set weights [1 (input), 1 (state)]."""
    recurrent = RecurrentUnit(unit, 1, 1).double()
    with torch.no_grad():
        if unit == "nau":
            recurrent.unit.W.fill_(1.0)
        else:
            recurrent.unit.W_hat.fill_(40.0)
            recurrent.unit.M_hat.fill_(40.0)
    return recurrent


@pytest.mark.parametrize("unit", ["nac", "nalu", "nau", "nmu"])
def test_recurrent_unit_returns_one_state_per_step_and_the_last(unit):
    recurrent = RecurrentUnit(unit, 3, 4)
    x_seq = torch.rand(6, 2, 3) + 0.5
    outputs, h_last = recurrent(x_seq, recurrent.initial_state(2), torch.zeros(6, 2, dtype=torch.bool))
    assert outputs.shape == (6, 2, 4) and h_last.shape == (2, 4)
    torch.testing.assert_close(outputs[-1], h_last)
    assert recurrent.unit.in_features == 7 and recurrent.unit.out_features == 4


def test_recurrent_unit_feeds_the_previous_state_back():
    recurrent = RecurrentUnit("nac", 2, 3)
    x_seq, h0 = torch.randn(4, 5, 2), torch.randn(5, 3)
    outputs, _ = recurrent(x_seq, h0)
    h = h0
    for t in range(4):
        h = recurrent.unit(torch.cat([x_seq[t], h], dim=-1))
        torch.testing.assert_close(outputs[t], h)
    torch.testing.assert_close(recurrent.step(x_seq[0], h0), outputs[0])


@pytest.mark.parametrize("unit", ["nac", "nau"])
def test_hand_set_recurrent_accumulator_sums_over_1000_steps_exactly(unit):
    recurrent = _accumulator(unit)
    x_seq = torch.rand(1000, 8, 1, dtype=torch.float64) * 200 - 100
    outputs, h_last = recurrent(x_seq, torch.zeros(8, 1, dtype=torch.float64))
    torch.testing.assert_close(h_last, x_seq.sum(0), rtol=1e-10, atol=1e-8)
    torch.testing.assert_close(outputs, x_seq.cumsum(0), rtol=1e-10, atol=1e-8)


def test_reset_zeroes_the_state_before_that_step_only_for_that_batch_entry():
    recurrent = _accumulator("nau")
    x_seq = torch.ones(6, 2, 1, dtype=torch.float64)
    h0 = torch.full((2, 1), 10.0, dtype=torch.float64)
    reset = torch.zeros(6, 2, dtype=torch.bool)
    reset[3, 0] = True  # an episode of entry 0 begins at step 3
    outputs, h_last = recurrent(x_seq, h0, reset)
    assert outputs[:, 0, 0].tolist() == [11.0, 12.0, 13.0, 1.0, 2.0, 3.0]
    assert outputs[:, 1, 0].tolist() == [11.0, 12.0, 13.0, 14.0, 15.0, 16.0]
    assert h_last[:, 0].tolist() == [3.0, 16.0]


def test_recurrent_unit_passes_options_and_the_regulariser_through():
    recurrent = RecurrentUnit("nalu", 2, 2, tied_weights=False, eps=1e-5)
    assert recurrent.unit.multiplicative_nac is not None and recurrent.unit.eps == 1e-5
    nau_cell = RecurrentUnit(NAU, 1, 1)
    with torch.no_grad():
        nau_cell.unit.W.copy_(torch.tensor([[0.5, 1.0]]))
    assert nau_cell.regularizer().item() == pytest.approx(0.25)


def test_recurrent_unit_rejects_a_sequence_of_the_wrong_width():
    recurrent = RecurrentUnit("nac", 2, 3)
    with pytest.raises(ValueError, match="x_seq"):
        recurrent(torch.zeros(4, 5, 3), torch.zeros(5, 3))
