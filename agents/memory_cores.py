"""The memory slot's cores, which produce "memory" = h_t:
  LSTMCore:  (h_t, c_t) = LSTM(x_t; h_{t-1}, c_{t-1})
  GRUCore:   h_t = GRU(x_t; h_{t-1})
with x_t the concat of a core's inputs; the input projection of all T steps is one matrix product
where the core reads no other core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from nalu_rl.agents.core import SEQUENCE_SIGNALS, Core, Signals, State, StepResult, input_width
from nalu_rl.agents.wiring import COUNT_SIGNAL, MEMORY_SIGNAL, Wiring


class LSTMCore(Core):
    """An LSTM cell run over the sequence; the input projection of all T steps is one matrix product.

    The inputs from the sequence go through `lstm_input` before the time loop; only the hidden
    state (`lstm_hidden`) and a "count" input (`lstm_count`) are projected inside it.
    """

    signal = MEMORY_SIGNAL

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], hidden_size: int, wiring: Wiring
    ) -> None:
        super().__init__(inputs, ("lstm_h", "lstm_c"), hidden_size)
        if MEMORY_SIGNAL in inputs:
            raise ValueError("the LSTM core cannot read its own output")
        self.sequence_inputs = tuple(name for name in inputs if name in SEQUENCE_SIGNALS)
        sequence_width = sum(input_widths[name] for name in self.sequence_inputs)
        self.lstm_input = nn.Linear(sequence_width, 4 * hidden_size) if sequence_width else None
        self.lstm_hidden = nn.Linear(hidden_size, 4 * hidden_size, bias=self.lstm_input is None)
        self.lstm_count = (
            nn.Linear(input_widths[COUNT_SIGNAL], 4 * hidden_size, bias=False)
            if COUNT_SIGNAL in inputs
            else None
        )
        bound = 1.0 / math.sqrt(hidden_size)
        for layer in (self.lstm_input, self.lstm_hidden, self.lstm_count):
            if layer is not None:
                for parameter in layer.parameters():
                    nn.init.uniform_(parameter, -bound, bound)

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """Only the other core's signal: the sequence inputs go through `prepare`."""
        return self.reads_cores

    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """The gate pre-activations from the sequence inputs, one [B, 4 * hidden] tensor per step."""
        if self.lstm_input is None:
            return None
        return self.lstm_input(torch.cat([sequence[name] for name in self.sequence_inputs], -1)).unbind(0)

    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """(h_t, c_t) from (h_{t-1}, c_{t-1}); returns h_t and the state (h_t, c_t)."""
        h, c = state[0] * keep, state[1] * keep
        gates = self.lstm_hidden(h) if prepared is None else prepared + self.lstm_hidden(h)
        if self.lstm_count is not None:
            gates = gates + self.lstm_count(signals[COUNT_SIGNAL])
        input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, dim=-1)
        c = torch.sigmoid(forget_gate) * c + torch.sigmoid(input_gate) * torch.tanh(cell_gate)
        h = torch.sigmoid(output_gate) * torch.tanh(c)
        return h, (h, c)


class GRUCore(Core):
    """torch's `GRUCell` run over the sequence: h_t = GRU(x_t, h_{t-1}), x_t the concat of its inputs.

    With r, z the reset and update gates: n_t = tanh(W_n x_t + b_n + r_t * (U_n h_{t-1} + c_n)),
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}. The weights are the cell's (`gru_cell`); when the core
    reads no other core, the input projection of all T steps is one matrix product. Its state is h
    alone ("gru_h").
    """

    signal = MEMORY_SIGNAL

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(inputs, ("gru_h",), size)
        if MEMORY_SIGNAL in inputs:
            raise ValueError("the GRU core cannot read its own output")
        self.gru_cell = nn.GRUCell(input_width(inputs, input_widths), size)

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """All its inputs when it reads another core (the concat is then built step by step), else none."""
        return self.inputs if self.reads_cores else ()

    def project_input(self, x: Tensor) -> Tensor:
        """W x + b, the input's share of the three gates [..., 3 * size]."""
        return nn.functional.linear(x, self.gru_cell.weight_ih, self.gru_cell.bias_ih)

    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """The input projections of all T steps, one [B, 3 * size] tensor per step, when it reads no core."""
        if self.reads_cores:
            return None
        return self.project_input(torch.cat([sequence[name] for name in self.inputs], -1)).unbind(0)

    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """h_t from h_{t-1}; returns h_t and the state (h_t,)."""
        h = state[0] * keep
        if prepared is None:
            prepared = self.project_input(torch.cat([signals[name] for name in self.inputs], -1))
        input_reset, input_update, input_new = prepared.chunk(3, dim=-1)
        hidden = nn.functional.linear(h, self.gru_cell.weight_hh, self.gru_cell.bias_hh)
        hidden_reset, hidden_update, hidden_new = hidden.chunk(3, dim=-1)
        reset = torch.sigmoid(input_reset + hidden_reset)
        update = torch.sigmoid(input_update + hidden_update)
        new = torch.tanh(input_new + reset * hidden_new)
        h = (1 - update) * new + update * h
        return h, (h,)
