"""The event counter: learned-count's counter core, a count of learned events that stays exact at any
length (`EventCounterCore`, registered as the core "event-counter"), with the sum it unrolls by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import torch
from torch import Tensor, nn

from nalu_rl.agents.core import Signals, State, StepResult, input_width
from nalu_rl.agents.counter_cores import CounterCore
from nalu_rl.agents.wiring import MEMORY_SIGNAL, Wiring
from nalu_rl.units import BinaryGate, GridSnap, make_unit, run_in_float32


class EventCounterCore(CounterCore):
    """A count of learned events: what to count is learned, and the count stays exact at any length.

    Per step t, with x_t = [the encoder's features, the stimulus clamped to [-1, 1]] (and, where the
    wiring's counter inputs end with "memory", the memory core's h_t: the counter then steps after it)
    and s_t the raw stimulus (absent where the observation has none):
      phase   p_t = step(W_p [x_t, p_{t-1}] + b_p)   PHASE_BITS bits: a finite-state memory
      events  e_t = step(W_e [x_t, p_t] + b_e)       EVENTS bits, each exactly 0 or 1
      count   m_t = m_{t-1} + U([s_t, 0, 0]) + snap(U([0, e_t, 1 - e_t]))
    with U the wiring's unit (size units, no decay), and it produces "count" = [m_t, e_t, p_t]. The
    steps are `BinaryGate`s (straight-through), so with U's weights at -1, 0 or +1 every increment is
    an integer and m_t an exact count at any T. `snap` (`GridSnap`) uses what the events add within
    INCREMENT_TOLERANCE of a multiple of INCREMENT_GRID as exactly that, and its regulariser pulls
    it there: a count of +-1/2 per step (what the NAU finds for "light up, dark down" from the light
    and a constant, its weights being at most 1) is then exact too. The grid ends at
    +-INCREMENT_BOUND: a timer's events add at most one step a step, so the regulariser pulls a
    larger step back to +-1 rather than keeping it on the grid (two always-on events at -0.70 and
    -0.80 made a count of -1.5 a step, exact and wrong: RESULTS, "`learned-count`"). The stimulus
    (T itself, on TimeTrack) enters through its own weight, outside the grid's bound. Each
    event comes with its complement, so one learned distinction (light or dark, cue or none) gives
    the count both a step up and a step down. The phase holds what the current frame does not show
    (which part of a task it is in), yet, being a few bits driven by the frame, it cannot count
    elapsed time itself: with a constant input it settles into a cycle of at most 2 ** PHASE_BITS
    steps. The events start on (gate bias `EVENT_BIAS`), so at the
    start the count already has a constant input to count with, as signed-count's bias.
    `unroll` computes the same as `step` over a whole sequence, the phase step by step and the rest
    for all steps at once: a subclass that changes one changes both.
    """

    EVENTS = 2
    # Whether the events are learned by a gate of their own (a subclass may make them otherwise).
    LEARNS_EVENTS = True
    PHASE_BITS = 2
    EVENT_BIAS = 1.0
    INCREMENT_GRID = 0.5
    INCREMENT_TOLERANCE = 0.05
    INCREMENT_BOUND = 1.0

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("event_count", "event_bits", "event_phase"), inputs, size)
        if self.reads_cores != (MEMORY_SIGNAL,) * len(self.reads_cores) or (
            self.reads_cores and inputs[-1] != MEMORY_SIGNAL
        ):
            raise ValueError(
                f"the event counter reads the observation (encoder, stimulus) and, last, the memory: {inputs}"
            )
        if "bias" in inputs:
            raise ValueError("the event counter learns its constant events itself; do not give it 'bias'")
        self.stimulus_width = input_widths["stimulus"] if "stimulus" in inputs else 0
        self.gate_input_width = input_width(inputs, input_widths)
        # The gates read the observation's signals (prepared for all steps at once) and, where the
        # wiring says so, the memory core's h_t (read step by step).
        self.sequence_input_width = input_width(self.sequence_inputs, input_widths)
        if self.gate_input_width < 1:
            raise ValueError("the event counter needs an input to learn its events from")
        self.phase_gate = BinaryGate(self.gate_input_width + self.PHASE_BITS, self.PHASE_BITS)
        self.event_gate = (
            BinaryGate(self.gate_input_width + self.PHASE_BITS, self.EVENTS, initial_bias=self.EVENT_BIAS)
            if self.LEARNS_EVENTS
            else None
        )
        self.counter_unit = make_unit(wiring.unit, self.stimulus_width + 2 * self.EVENTS, size)
        self.increment_snap = GridSnap(self.INCREMENT_GRID, self.INCREMENT_TOLERANCE, self.INCREMENT_BOUND)
        # What every step applies, derived from the parameters by `prepare` (`_derived_weights`).
        self._weights: _EventCounterWeights | None = None
        self._weights_key: tuple | None = None

    @property
    def gates(self) -> tuple[BinaryGate, ...]:
        """The phase gate, and the event gate where the events are learned by one."""
        return (self.phase_gate,) if self.event_gate is None else (self.phase_gate, self.event_gate)

    @property
    def learned_events(self) -> int:
        """The width of the event gate's output: EVENTS, or 0 without an event gate."""
        return self.EVENTS if self.event_gate is not None else 0

    @property
    def sequence_inputs(self) -> tuple[str, ...]:
        """The inputs known for all steps at once (the encoder, the stimulus)."""
        return tuple(name for name in self.inputs if name not in self.reads_cores)

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """Only the memory core's signal, where it is read: the rest goes through `prepare`."""
        return self.reads_cores

    @property
    def output_size(self) -> int:
        """[m_t, e_t, p_t]: the count, the events and the phase."""
        return self.state_size + self.EVENTS + self.PHASE_BITS

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """A zero count [B, size], events [B, events] and phase [B, phase_bits]. The events of the last
        step are kept in the state only so that they can be read (the counter view); nothing reads
        them back."""
        return tuple(
            torch.zeros(batch_size, width, device=device)
            for width in (self.state_size, self.EVENTS, self.PHASE_BITS)
        )

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> Tensor:
        """Per step, [what the stimulus adds to the count (a linear unit; else the raw stimulus), the
        gates' pre-activations from x_t]: [T, B, ...]."""
        for gate in self.gates:
            gate.forget_pre_activations()
        self.increment_snap.forget_values()
        # The gates read the stimulus saturated, so a T of 1000 looks to them like one of 5.
        x = torch.cat(
            [_saturated(name, sequence[name]) for name in self.sequence_inputs],
            -1,
        )
        weights = self._derived_weights()
        from_x = nn.functional.linear(x, weights.from_x, weights.from_x_bias)
        stimulus = sequence["stimulus"] if self.stimulus_width else x[..., :0]
        if weights.from_stimulus is not None:
            # The stimulus's part of each increment does not depend on the events: one product here.
            stimulus = nn.functional.linear(stimulus, weights.from_stimulus)
        return torch.cat([stimulus, from_x], -1)

    def _derived_weights(self) -> _EventCounterWeights:
        """The weights every step applies, read out of the parameters and kept for the steps
        (`_weights`). Where no gradient is wanted (an actor's steps) they are reused until a
        parameter changes, so that a step of one environment step does not derive them again."""
        key = None
        parameters = tuple(self.parameters())
        # (An inference tensor, a parameter made under inference mode, keeps no version: not kept.)
        if not torch.is_grad_enabled() and not any(weight.is_inference() for weight in parameters):
            key = tuple((weight.data_ptr(), weight._version) for weight in parameters)
            if key == self._weights_key:
                return self._weights
        width, sequence_width = self.gate_input_width, self.sequence_input_width
        gates = self.gates
        from_stimulus = from_events = None
        if self.counter_unit.is_linear:
            from_stimulus, from_events = self.counter_unit.weight.split(
                [self.stimulus_width, 2 * self.EVENTS], dim=-1
            )
        weights = _EventCounterWeights(
            from_x=torch.cat([gate.linear.weight[:, :sequence_width] for gate in gates]),
            from_memory=torch.cat([gate.linear.weight[:, sequence_width:width] for gate in gates]),
            from_x_bias=torch.cat([gate.linear.bias for gate in gates]),
            phase_to_phase=self.phase_gate.linear.weight[:, width:].T,
            phase_to_events=None if self.event_gate is None else self.event_gate.linear.weight[:, width:].T,
            from_stimulus=from_stimulus,
            from_events=from_events,
        )
        self._weights, self._weights_key = weights, key
        return weights

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """p_t, e_t and m_t from the prepared step and (m_{t-1}, p_{t-1}); returns [m_t, e_t, p_t]."""
        count, phase = state[0] * keep, state[2] * keep
        from_stimulus, phase_from_x, event_from_x = self._split_prepared(prepared)
        if self.reads_cores:
            memory = torch.cat([signals[name].float() for name in self.reads_cores], -1)
            phase_from_memory, event_from_memory = nn.functional.linear(
                memory, self._weights.from_memory
            ).split([self.PHASE_BITS, self.learned_events], dim=-1)
            phase_from_x = phase_from_x + phase_from_memory
            event_from_x = event_from_x + event_from_memory
        phase = self.next_phase(phase_from_x, phase)
        events = self.next_events(event_from_x, phase)
        count = count + self._increment(from_stimulus, events)
        return torch.cat([count, events, phase], -1), (count, events, phase)

    @run_in_float32
    def unroll_prepared(self, prepared: Tensor, state: State, keep: Tensor) -> StepResult:
        """`step` over all T steps, with only the phase (its own recurrence) computed step by step:
        the events, their increments and the count of all T steps are each one computation (one
        step, as an actor takes, goes through `step`: fewer operations)."""
        if keep.shape[0] == 1:
            return super().unroll_prepared(prepared, state, keep)
        from_stimulus, phase_from_x, event_from_x = self._split_prepared(prepared)
        phase, phases = state[2], []
        for t, keep_step in enumerate(keep.unbind(0)):
            phase = self.next_phase(phase_from_x[t], phase * keep_step)
            phases.append(phase)
        phases = torch.stack(phases)
        events = self.next_events(event_from_x, phases)
        counts = sum_since_reset(self._increment(from_stimulus, events), keep, state[0])
        return torch.cat([counts, events, phases], -1), (counts[-1], events[-1], phases[-1])

    def next_phase(self, phase_from_x: Tensor, phase: Tensor) -> Tensor:
        """p_t from the phase gate's pre-activation from x_t (and the memory) and p_{t-1} (zero where
        an episode starts): step(W_p [x_t, p_{t-1}] + b_p)."""
        return self.phase_gate.events(phase_from_x + phase @ self._weights.phase_to_phase)

    def next_events(self, event_from_x: Tensor, phase: Tensor) -> Tensor:
        """e_t from the event gate's pre-activation from x_t (and the memory) and p_t: step(W_e [x_t,
        p_t] + b_e) (for one step or all steps at once)."""
        return self.event_gate.events(event_from_x + phase @ self._weights.phase_to_events)

    def _split_prepared(self, prepared: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """`prepare`'s output -> (the stimulus's part of the increment, or the raw stimulus where
        the unit is not linear; the phase gate's pre-activation from x; the event gate's)."""
        linear = self._weights.from_events is not None
        return prepared.split(
            [self.state_size if linear else self.stimulus_width, self.PHASE_BITS, self.learned_events], dim=-1
        )

    def _increment(self, from_stimulus: Tensor, events: Tensor) -> Tensor:
        """What a step adds to the count: the stimulus's part plus the events' part, snapped."""
        event_pairs = torch.cat([events, 1.0 - events], -1)
        if self._weights.from_events is not None:
            from_events = nn.functional.linear(event_pairs, self._weights.from_events)
        else:  # a unit that is not linear: `prepare` left the raw stimulus; read the unit with and without it
            raw_stimulus = from_stimulus
            from_events = self.counter_unit(torch.cat([torch.zeros_like(raw_stimulus), event_pairs], -1))
            from_stimulus = self.counter_unit(torch.cat([raw_stimulus, event_pairs], -1)) - from_events
        return from_stimulus + self.increment_snap(from_events)


class _EventCounterWeights(NamedTuple):
    """What `EventCounterCore`'s steps apply, read out of its parameters."""

    from_x: Tensor  # both gates' weights on x_t, phase bits first [PHASE_BITS + EVENTS, width]
    from_x_bias: Tensor
    from_memory: Tensor  # both gates' weights on the memory's h_t (no columns where it is not read)
    phase_to_phase: Tensor  # [PHASE_BITS, PHASE_BITS], applied as p_{t-1} @ it
    phase_to_events: Tensor | None  # [PHASE_BITS, EVENTS], applied as p_t @ it (None: no event gate)
    from_stimulus: Tensor | None  # a linear unit's weights on the stimulus and on the events' pairs
    from_events: Tensor | None


def sum_since_reset(increments: Tensor, keep: Tensor, start: Tensor) -> Tensor:
    """m_t = keep_t * m_{t-1} + increments_t for all T steps at once: increments [T, B, S], keep
    [T, B, 1] (0 where an episode starts), start m_{-1} [B, S] -> m [T, B, S]. Each m_t is the sum of
    the increments since the last start at or before t, plus `start` where there was none."""
    steps = torch.arange(keep.shape[0], device=keep.device).view(-1, 1, 1)
    # The index of the last start at or before each step; -1 where the sequence has had none.
    last_start = torch.where(keep == 0, steps, -1).cummax(0).values
    totals = increments.cumsum(0)
    before = torch.cat([torch.zeros_like(totals[:1]), totals[:-1]])
    at_last_start = before.gather(0, last_start.clamp(min=0).expand_as(totals))
    return totals - at_last_start + (last_start < 0) * start


def _saturated(name: str, signal: Tensor) -> Tensor:
    """The stimulus clamped to [-1, 1]; any other signal as it is."""
    return signal.clamp(-1.0, 1.0) if name == "stimulus" else signal
