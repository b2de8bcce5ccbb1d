"""An LSTM's T steps in torch's fused kernel (`torch.lstm`), with episodes that start inside the sequence.

A fused kernel runs a whole sequence from one initial state and cannot zero the state where an
episode starts. A *blank step* does it instead: before each step at which an episode starts
(after the first step), one extra step is inserted whose input closes the input, forget and
output gates (a pre-activation of -RESET_PRE_ACTIVATION, so each sigmoid is exactly 0). After it
c = 0 and h = 0, exactly, and no gradient flows through it (the sigmoids' slopes are 0 there). The
blank is driven by one extra input column, 1 on blank steps and 0 elsewhere; each env's sequence is
then as long as its own steps and blanks, padded at the end to the longest. The outputs of the real
steps are gathered back; they equal those of the step-by-step LSTM (`LSTMCore.step`), and so do
their gradients.

The kernel returns h for every step but c only after the padded end, so the final c is recomputed
from the outputs in one pass (`final_cell`): c_T = sum_t (prod_{j>t} f_j keep_j) i_t g_t +
(prod_j f_j keep_j) c_0, with each step's gates from its input and the h before it.
"""

from __future__ import annotations

import torch
from torch import Tensor

RESET_PRE_ACTIVATION = 1e4
"""A blank step's pre-activation of the input, forget and output gates, negated: sigmoid(-1e4) is 0
in float32 and bfloat16, far beyond what the weights and a bounded h can offset."""


def blank_step_layout(keep: Tensor) -> tuple[Tensor, int]:
    """keep [T, B, 1] (0 where an episode starts) -> (the row [T * B] of each step (t, b), time-major, in
    the padded [L, B] layout flattened, where a blank step precedes each start after t = 0; L)."""
    steps, envs = keep.shape[:2]
    starts = keep[..., 0] == 0
    starts[0] = False  # the first step starts from the given state, multiplied by keep[0]
    time_in_layout = torch.arange(steps, device=keep.device).unsqueeze(1) + torch.cumsum(starts, 0)
    length = int(time_in_layout[-1].max()) + 1
    rows = time_in_layout * envs + torch.arange(envs, device=keep.device)
    return rows.reshape(-1), length


def fused_lstm_outputs(
    inputs: Tensor,
    state: tuple[Tensor, Tensor],
    keep: Tensor,
    weight_input: Tensor,
    bias_input: Tensor,
    weight_hidden: Tensor,
    bias_hidden: Tensor | None,
) -> Tensor:
    """h_t [T, B, H] of the LSTM with gates (i, f, g, o) = W_in x_t + b_in + W_h h_{t-1} + b_h, from
    inputs x [T, B, I], the state (h, c) [B, H] before the first step and keep [T, B, 1]."""
    steps, envs, width = inputs.shape
    hidden = weight_hidden.shape[1]
    rows, length = blank_step_layout(keep)
    blank_flag = torch.zeros(steps * envs, 1, dtype=inputs.dtype, device=inputs.device)
    step_rows = torch.cat([inputs.reshape(steps * envs, width), blank_flag], 1)
    padded = torch.ones(length * envs, width + 1, dtype=inputs.dtype, device=inputs.device)
    padded[:, :width] = 0  # every row is a blank step unless a real step lands on it
    padded = padded.index_copy(0, rows, step_rows)
    closed, open_ = -RESET_PRE_ACTIVATION, 0.0
    reset_column = weight_input.new_tensor([closed, closed, open_, closed]).repeat_interleave(hidden)
    weights = (
        torch.cat([weight_input, reset_column.unsqueeze(1)], 1),
        weight_hidden,
        bias_input,
        torch.zeros_like(bias_input) if bias_hidden is None else bias_hidden,
    )
    initial = (state[0] * keep[0]).unsqueeze(0), (state[1] * keep[0]).unsqueeze(0)
    training = torch.is_grad_enabled()  # (has biases, layers, dropout, training, bidirectional, batch first)
    outputs, *_ = torch.lstm(
        padded.view(length, envs, width + 1), initial, weights, True, 1, 0.0, training, False, False
    )
    return outputs.reshape(length * envs, hidden)[rows].view(steps, envs, hidden)


def final_cell(input_gates: Tensor, hidden_gates: Tensor, c0: Tensor, keep: Tensor) -> Tensor:
    """The cell c [B, H] after the last of T steps, from each step's input share of the gates
    [T, B, 4H], its hidden share (from the h before the step, zero where an episode starts), the cell
    c0 before the first step and keep [T, B, 1]."""
    input_gate, forget_gate, cell_gate, _ = (input_gates + hidden_gates).float().chunk(4, dim=-1)
    kept = torch.sigmoid(forget_gate) * keep
    written = torch.sigmoid(input_gate) * torch.tanh(cell_gate)
    kept_from = torch.cumprod(kept.flip(0), 0).flip(0)  # prod_{j >= t} f_j keep_j
    kept_after = torch.cat([kept_from[1:], torch.ones_like(kept_from[:1])])  # prod_{j > t}
    return (kept_after * written).sum(0) + kept_from[0] * c0
