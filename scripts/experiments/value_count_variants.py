"""Makes docs/POPGYM.md, "The counting agent on Medium and Hard".

The value-count variants tried on Count Recall Medium and Hard, registered for `--import`:

    cd scripts/experiments && python -m nalu_rl.train --import popgym --import value_count_variants \
        --agent value-count-input-counts --env-id popgym-CountRecallMedium-v0 --seed 0 \
        --total-steps 1500000 --eval-episodes 0 --actors 0 --learner-threads 1

Each is `value-count` with one or two changes:
- value-count-obs-actor: the actor's linear head reads the observation only, not the counts (their
  count still reaches it through the count-as-action term); on Hard the counts reach 200, and a
  linear head over them made the policy deterministic.
- value-count-input-counts: the same, and the core also counts each input feature itself (for a
  one-hot observation: each value of each entry), beside its 16 learned events; the read gates
  select among all of these counts. On Medium the learned events fell into one slot that counts
  every step (a clock), read at a quarter: the count expected of any suit.
- value-count-input-counts-r0: the same with every read starting off (read gate bias -3, sigmoid
  0.047, snapped to 0), so the count asked for starts at 0 instead of half of all the counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents.catalog import VALUE_COUNT
from nalu_rl.agents.core import Signals, State, StepResult, input_width
from nalu_rl.agents.counter_cores import CounterCore
from nalu_rl.agents.event_counter import sum_since_reset
from nalu_rl.agents.registry import register_agent, register_core
from nalu_rl.agents.value_count import ValueCountCore
from nalu_rl.agents.wiring import Wiring
from nalu_rl.units import GridSnap, run_in_float32
from nalu_rl.units.one_hot_gate import OneHotGate, straight_through_one_hot


class InputAndValueCountCore(ValueCountCore):
    """Counts of each input feature and of K learned one-hot events, read through snapped gates.

    Per step, with x_t its inputs (width W): n_t = n_{t-1} + [x_t, one_hot(argmax(W_e x_t + b_e))]
    (W + K counts), r_t = snap(sigmoid(W_r x_t + b_r)) (W + K), c_t = r_t . n_t; it produces
    [c_t, n_t]. With one-hot inputs (the encoder "flat" on a MultiDiscrete observation) the first W
    counts are exact counts of each value seen in each entry, with nothing to learn. It keeps
    `ValueCountCore`'s read and output; its gates are wider.
    """

    READ_BIAS: float | None = None  # None: nn.Linear's own initialisation

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        self.input_features = input_width(inputs, input_widths)
        CounterCore.__init__(self, ("value_counts",), inputs, self.input_features + size)
        self.events = size
        self.event_gate = OneHotGate(self.input_features, size)
        self.read_gate = nn.Linear(self.input_features, self.input_features + size)
        self.read_snap = GridSnap(step=1.0, tolerance=self.READ_TOLERANCE, bound=1.0)
        if self.READ_BIAS is not None:
            nn.init.constant_(self.read_gate.bias, self.READ_BIAS)

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> Tensor:
        self.read_snap.forget_values()
        x = torch.cat([sequence[name] for name in self.inputs], -1)
        return torch.cat([x, self.event_gate.pre_activation(x), self.read_gate(x)], -1)

    def _increments(self, prepared: Tensor) -> tuple[Tensor, Tensor]:
        x, event_logits, read_logits = prepared.split(
            [self.input_features, self.events, self.state_size], dim=-1
        )
        return torch.cat([x, straight_through_one_hot(event_logits)], -1), read_logits

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        increments, read_logits = self._increments(prepared)
        counts = state[0] * keep + increments
        return self._read(read_logits, counts), (counts,)

    @run_in_float32
    def unroll(self, prepared: Tensor, state: State, keep: Tensor) -> StepResult:
        increments, read_logits = self._increments(prepared)
        counts = sum_since_reset(increments, keep, state[0])
        return self._read(read_logits, counts), (counts[-1],)


class InputCountsReadsOffCore(InputAndValueCountCore):
    """InputAndValueCountCore with every read starting off."""

    READ_BIAS = -3.0


register_core("value-count-input-counts", InputAndValueCountCore)
register_core("value-count-input-counts-r0", InputCountsReadsOffCore)
_OBS_ACTOR = replace(VALUE_COUNT, actor_inputs=("encoder",))
register_agent(
    "value-count-obs-actor", _OBS_ACTOR, "value-count; the actor's head reads the observation only."
)
register_agent(
    "value-count-input-counts",
    replace(_OBS_ACTOR, counter="value-count-input-counts"),
    "value-count-obs-actor; the core also counts each input feature.",
)
register_agent(
    "value-count-input-counts-r0",
    replace(_OBS_ACTOR, counter="value-count-input-counts-r0"),
    "value-count-input-counts; every read starts off.",
)
