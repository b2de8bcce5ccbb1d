"""Pilot v8: learned-count whose count has no learned weights: m_t = m_(t-1) + s_t + up_t - down_t,
with up and down the two learned binary events (down starts on, up off: at the start it is
signed-count's wiring [stimulus, -1]). Registered as the agent `learned-updown`."""

from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents import register_agent, register_core
from nalu_rl.agents.catalog import LEARNED_COUNT, SIGNED_COUNT_TRAINING
from nalu_rl.agents.cores import EventCounterCore


class FixedUpDown(nn.Module):
    """[s, e_up, e_down, 1 - e_up, 1 - e_down] -> s + e_up - e_down (weights fixed)."""

    def __init__(self, stimulus_width: int, size: int) -> None:
        super().__init__()
        weight = torch.tensor([1.0] * stimulus_width + [1.0, -1.0, 0.0, 0.0]).expand(size, -1).clone()
        self.register_buffer("weight", weight)

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.linear(x, self.weight)


class UpDownCounterCore(EventCounterCore):
    def __init__(self, inputs, input_widths, size, wiring):
        super().__init__(inputs, input_widths, size, wiring)
        self.counter_unit = FixedUpDown(self.stimulus_width, size)
        with torch.no_grad():
            self.event_gate.linear.bias.copy_(torch.tensor([-self.EVENT_BIAS, self.EVENT_BIAS]))


register_core("updown-count-core", UpDownCounterCore)
register_agent(
    "learned-updown",
    replace(LEARNED_COUNT, counter="updown-count-core"),
    "learned-count with a fixed up/down count of its learned events",
    training_defaults=SIGNED_COUNT_TRAINING,
)
