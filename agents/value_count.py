"""The value counter: one exact count per learned value, read at the value the observation asks
about (`ValueCountCore`, registered as the core "value-count"; the `value-count` agent's counter).

For POPGym's Count Recall (a card dealt and a card asked about at each step; answer how many cards of
the asked value have been dealt), where a recurrent net must approximate the count.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor, nn

from nalu_rl.agents.core import Signals, State, StepResult, input_width
from nalu_rl.agents.counter_cores import CounterCore
from nalu_rl.agents.event_counter import sum_since_reset
from nalu_rl.agents.wiring import Wiring
from nalu_rl.units import GridSnap, run_in_float32
from nalu_rl.units.one_hot_gate import OneHotGate, straight_through_one_hot


class ValueCountCore(CounterCore):
    """K exact counts of learned events, and the count the observation asks for.

    Per step t, with x_t its inputs (the encoder's features) and K its size:
      events  e_t = one_hot(argmax(W_e x_t + b_e))    [K]: each step counts in exactly one slot
      counts  n_t = n_{t-1} + e_t                     [K]: integers, exact at any length
      read    r_t = snap(sigmoid(W_r x_t + b_r))      [K]: which slots the observation asks about
      count   c_t = r_t . n_t
    and it produces "count" = [c_t, n_t] (width 1 + K). The events are a `OneHotGate`
    (straight-through), so every n_t is an exact integer, whatever the weights. The read is a gate per
    slot rather than a softmax over them: where the steps of one value fell into several slots (a
    slot per dealt and asked pair, say), their sum is its count. `snap` (`GridSnap`) uses a read
    within READ_TOLERANCE of 0 or 1 as exactly that, and its regulariser pulls the others there, so
    once every read is decided c_t is an exact integer too. The events mean the same observations only
    while the features they read stay put: the value-count agent gives them the observation itself
    (the encoder "flat", `nalu_rl.agents.flat_encoder`). `unroll` computes the same as `step`, for all
    steps at once.
    """

    READ_TOLERANCE = 0.05

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("value_counts",), inputs, size)
        if self.reads_cores or "bias" in inputs or "encoder" not in inputs:
            raise ValueError(
                f"the value counter reads 'encoder' (and optionally 'stimulus') only, got {inputs}"
            )
        if size < 2:
            raise ValueError(f"the value counter needs 2 or more counts to tell values apart, got {size}")
        width = input_width(inputs, input_widths)
        self.event_gate = OneHotGate(width, size)
        self.read_gate = nn.Linear(width, size)
        self.read_snap = GridSnap(step=1.0, tolerance=self.READ_TOLERANCE, bound=1.0)

    @property
    def output_size(self) -> int:
        """[c_t, n_t]: the count asked for, then every count."""
        return 1 + self.state_size

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> Tensor:
        """The events' and the read's pre-activations of every step, [T, B, 2K]."""
        self.read_snap.forget_values()
        x = torch.cat([sequence[name] for name in self.inputs], -1)
        return torch.cat([self.event_gate.pre_activation(x), self.read_gate(x)], -1)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """n_t from n_{t-1} and this step's events; returns [c_t, n_t]."""
        event_logits, read_logits = prepared.split(self.state_size, dim=-1)
        counts = state[0] * keep + straight_through_one_hot(event_logits)
        return self._read(read_logits, counts), (counts,)

    @run_in_float32
    def unroll_prepared(self, prepared: Tensor, state: State, keep: Tensor) -> StepResult:
        """`step` over all T steps at once: the counts are sums of the events since each start."""
        event_logits, read_logits = prepared.split(self.state_size, dim=-1)
        counts = sum_since_reset(straight_through_one_hot(event_logits), keep, state[0])
        return self._read(read_logits, counts), (counts[-1],)

    def _read(self, read_logits: Tensor, counts: Tensor) -> Tensor:
        """[c, n]: the count the read gates select, then the counts."""
        read = self.read_snap(torch.sigmoid(read_logits))
        return torch.cat([(read * counts).sum(-1, keepdim=True), counts], -1)


class FeatureCountsCore(CounterCore):
    """Exact counts of each input feature and of K learned one-hot events, with no read of its own.

    Per step t, with x_t its inputs (width W) and K its size:
      n_t = n_{t-1} + [x_t, one_hot(argmax(W_e x_t + b_e))]     [W + K]
    and it produces "count" = n_t. With one-hot inputs (the encoder "flat" on Discrete or
    MultiDiscrete entries) the first W counts are the exact count of each value of each entry, with
    nothing to learn; the K learned events (a `OneHotGate`, straight-through) can count what no
    single feature marks. Which count answers is for the actor to choose: the wiring's
    `count_mixture` (`nalu_rl.agents.count_mixture`). `unroll` computes the same as `step`.
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        if any(name not in ("encoder", "stimulus") for name in inputs) or "encoder" not in inputs:
            raise ValueError(
                f"the feature counter reads 'encoder' (and optionally 'stimulus') only, got {inputs}"
            )
        self.input_features = input_width(inputs, input_widths)
        super().__init__(("feature_counts",), inputs, self.input_features + size)
        self.events = size
        self.event_gate = OneHotGate(self.input_features, size)

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> Tensor:
        """Every step's increments [T, B, W + K]: the inputs, then the learned events."""
        x = torch.cat([sequence[name] for name in self.inputs], -1)
        return torch.cat([x, straight_through_one_hot(self.event_gate.pre_activation(x))], -1)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """n_t from n_{t-1} and this step's increments."""
        counts = state[0] * keep + prepared
        return counts, (counts,)

    @run_in_float32
    def unroll_prepared(self, prepared: Tensor, state: State, keep: Tensor) -> StepResult:
        """`step` over all T steps at once: the counts are sums of the increments since each start."""
        counts = sum_since_reset(prepared, keep, state[0])
        return counts, (counts[-1],)
