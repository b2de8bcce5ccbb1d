"""A leaky integrator for nalu_rl's counter slot, plugged in through the public API (docs/EXTENDING.md).

m_t = a * m_{t-1} + W x_t, with a decay a = sigmoid(d) in (0, 1) learned per unit: the accumulator's
count as a nears 1, a fading trace below. The decay d is a bare nn.Parameter of the core, which the
model trains, saves and moves to the device like any layer's weights.

From this folder (or with it on PYTHONPATH):
    python -m nalu_rl.train --import custom_core --agent leaky --obs symbolic
The run records the module; a checkpoint imports nothing by itself, so evaluate it with
    python -m nalu_rl.evaluate --import custom_core --checkpoint RUN
"""

from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents import Core, agent_wiring, register_agent, register_core


class LeakyIntegrator(Core):
    """m_t = sigmoid(d) * m_{t-1} + W x_t, x_t the concat of its inputs; its state is m alone."""

    def __init__(self, inputs: tuple[str, ...], input_widths: dict[str, int], size: int, wiring) -> None:
        super().__init__(inputs, state_names=("leaky",), state_size=size)
        self.drive = nn.Linear(sum(input_widths[name] for name in inputs), size)
        self.decay_logit = nn.Parameter(torch.full((size,), 3.0))  # a = 0.95 at the start

    def step(self, prepared, signals: dict[str, Tensor], state: tuple[Tensor, ...], keep: Tensor):
        """One step; `keep` is 0 where an episode starts, which zeroes the state first."""
        x = torch.cat([signals[name] for name in self.inputs], -1)
        m = torch.sigmoid(self.decay_logit) * state[0] * keep + self.drive(x)
        return m, (m,)


register_core("leaky", LeakyIntegrator)
# The nac agent with the leaky integrator for its accumulator: same inputs, heads and training defaults.
register_agent("leaky", replace(agent_wiring("nac"), counter="leaky"), "The nac agent with a leaky counter.")
