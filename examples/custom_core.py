"""A GRU core for nalu_rl, plugged in through the public API (docs/EXTENDING.md).

From this folder (or with it on PYTHONPATH):
    python -m nalu_rl.train --import custom_core --agent gru --obs symbolic
The run records the module, so `python -m nalu_rl.evaluate --checkpoint RUN` needs no --import.
"""

from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents import Core, agent_wiring, register_agent, register_core


class GRUCore(Core):
    """h_t = GRU(x_t, h_{t-1}), x_t the concat of its inputs; its state is h alone."""

    def __init__(self, inputs: tuple[str, ...], input_widths: dict[str, int], size: int, wiring) -> None:
        super().__init__(inputs, state_names=("gru_h",), state_size=size)
        self.gru_cell = nn.GRUCell(sum(input_widths[name] for name in inputs), size)

    def step(self, prepared, signals: dict[str, Tensor], state: tuple[Tensor, ...], keep: Tensor):
        """One step; `keep` is 0 where an episode starts, which zeroes the state first."""
        x = torch.cat([signals[name] for name in self.inputs], -1)
        h = self.gru_cell(x, state[0] * keep)
        return h, (h,)


register_core("gru", GRUCore)
# The paper's LSTM agent with a GRU in its memory slot: same inputs, heads and training defaults.
register_agent("gru", replace(agent_wiring("lstm"), memory_core="gru"), "The lstm agent with a GRU core.")
