"""Pilots v9 and v10: learned-count whose per-step count increment is snapped to the nearest multiple
of 1/2 when within 0.05 of it (straight-through), so a count of +-1/2 per step is exact at any T.
v10 adds a regulariser on the increments: the mean distance of each increment to the nearest multiple
of 1/2, under the same gate and schedule as the NAU's. Agents `learned-count-v9`, `learned-count-v10`."""

from dataclasses import replace

import torch
from torch import Tensor

from nalu_rl.agents import register_agent, register_core
from nalu_rl.agents.catalog import LEARNED_COUNT, SIGNED_COUNT_TRAINING
from nalu_rl.agents.cores import EventCounterCore
from nalu_rl.units import run_in_float32
from nalu_rl.units.base import ArithmeticUnit

GRID = 0.5
TOLERANCE = 0.05


def snap_to_grid(value: Tensor) -> Tensor:
    nearest = (value.detach() / GRID).round() * GRID
    near = (value.detach() - nearest).abs() <= TOLERANCE
    return torch.where(near, nearest + (value - value.detach()), value)


class SnappedIncrementCore(EventCounterCore):
    @run_in_float32
    def step(self, prepared, signals, state, keep):
        count, phase = state[0] * keep, state[2] * keep
        stimulus, phase_from_x, event_from_x = prepared.split(
            [self.stimulus_width, self.PHASE_BITS, self.EVENTS], dim=-1
        )
        width = self.gate_input_width
        phase = self.phase_gate.events(phase_from_x + phase @ self.phase_gate.linear.weight[:, width:].T)
        events = self.event_gate.events(event_from_x + phase @ self.event_gate.linear.weight[:, width:].T)
        increment = self.counter_unit(torch.cat([stimulus, events, 1.0 - events], -1))
        self.after_increment(increment)
        count = count + snap_to_grid(increment)
        return torch.cat([count, events, phase], -1), (count, events, phase)

    def after_increment(self, increment):
        pass


class IncrementGridPull(ArithmeticUnit):
    """Carries the increments' distance to the grid into the model's regulariser (no weights)."""

    def __init__(self):
        super().__init__(1, 1)
        self.terms = []

    def regularizer(self):
        if not self.terms:
            return torch.zeros(())
        value = torch.stack(self.terms).mean()
        self.terms = []
        return value


class PulledIncrementCore(SnappedIncrementCore):
    def __init__(self, inputs, input_widths, size, wiring):
        super().__init__(inputs, input_widths, size, wiring)
        self.grid_pull = IncrementGridPull()

    def prepare(self, sequence):
        self.grid_pull.terms = []
        return super().prepare(sequence)

    def after_increment(self, increment):
        if self.training and torch.is_grad_enabled():
            nearest = (increment.detach() / GRID).round() * GRID
            self.grid_pull.terms.append((increment - nearest).abs().mean())


register_core("snapped-increment-count", SnappedIncrementCore)
register_core("pulled-increment-count", PulledIncrementCore)
register_agent(
    "learned-count-v9",
    replace(LEARNED_COUNT, counter="snapped-increment-count"),
    "v9",
    training_defaults=SIGNED_COUNT_TRAINING,
)
register_agent(
    "learned-count-v10",
    replace(LEARNED_COUNT, counter="pulled-increment-count"),
    "v10",
    training_defaults=SIGNED_COUNT_TRAINING,
)


# v13: v10 with a snap tolerance of 0.1 (the agent `learned-count-v13`); v12 is v10 trained with
# `--regularizer-gate-success 0.25`.
class WideSnapCore(PulledIncrementCore):
    @run_in_float32
    def step(self, prepared, signals, state, keep):
        global TOLERANCE
        saved, TOLERANCE = TOLERANCE, 0.1
        try:
            return super().step(prepared, signals, state, keep)
        finally:
            TOLERANCE = saved


register_core("wide-snap-increment-count", WideSnapCore)
register_agent(
    "learned-count-v13",
    replace(LEARNED_COUNT, counter="wide-snap-increment-count"),
    "v13",
    training_defaults=SIGNED_COUNT_TRAINING,
)
