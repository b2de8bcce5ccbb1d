"""An up-down count for IntervalTiming, plugged in through the public API (docs/RESULTS.md, "IntervalTiming").

IntervalTiming's time left is 2T - t: a count that goes up while the light is on and down after.
signed-count's count reads [light, 1] and would need a weight of 2 on the light; this core reads
the light and its complement, so weights of +1 and -1 (where the signed NAU pulls them) give
m_t = (steps lit) - (steps dark) = 2T - t - 1 once the light is off. The actor reads the light beside
the clamped count, so it can tell the rising count from the falling one.

    cd examples && python -m nalu_rl.train --import updown_count --agent updown-count \
        --env-id nalu_rl/IntervalTiming-v0 --obs symbolic
"""

from dataclasses import replace

import torch

from nalu_rl.agents import agent_spec, agent_wiring, register_agent, register_core
from nalu_rl.agents.counter_cores import AccumulatorCore
from nalu_rl.units import run_in_float32


class UpDownCounter(AccumulatorCore):
    """m_t = m_{t-1} + U([s_t, 1 - s_t]) with s the stimulus (a light in 0..1) and U the wiring's unit."""

    def __init__(self, inputs, input_widths, size, wiring) -> None:
        if tuple(inputs) != ("stimulus",):
            raise ValueError(f"the up-down counter reads the stimulus only, got {inputs}")
        super().__init__(inputs, {"stimulus": 2 * input_widths["stimulus"]}, size, wiring)

    @run_in_float32
    def prepare(self, sequence):
        """The increments U([s_t, 1 - s_t]) of all T steps, one [B, size] tensor per step."""
        light = sequence["stimulus"]
        return self.counter_unit(torch.cat([light, 1.0 - light], -1)).unbind(0)


register_core("updown", UpDownCounter)
register_agent(
    "updown-count",
    replace(
        agent_wiring("signed-count"),
        counter="updown",
        counter_inputs=("stimulus",),
        actor_inputs=("encoder", "stimulus", "count"),
    ),
    "signed-count with an up-down count (the light and its complement) and an actor that sees the light.",
    training_defaults=agent_spec("signed-count").training_defaults,
)
