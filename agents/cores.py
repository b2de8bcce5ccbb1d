"""The recurrent cores of the actor-critic model: each core owns its layers, its state and its step.

A core reads named signals and produces one. The sequence signals ("encoder", "stimulus", "bias")
are known for all T steps at once; the core signals ("memory" = h_t, "count" = m_t) exist step by
step. Per step t, with x_t the concat of a core's inputs:
  LSTMCore:          (h_t, c_t) = LSTM(x_t; h_{t-1}, c_{t-1})        produces "memory" = h_t
  GRUCore:           h_t = GRU(x_t; h_{t-1})                          produces "memory" = h_t
  AccumulatorCore:   m_t = m_{t-1} + U(x_t)   (identity recurrence)   produces "count" = m_t
  RecurrentUnitCore: m_t = U([x_t, m_{t-1}])  (learned recurrence)    produces "count" = m_t
  LinearRecurrenceCore: z_t = lambda * z_{t-1} + gamma * B x_t, complex and diagonal (the LRU of
                     Orvieto et al. 2023), m_t = Re(C z_t) + D x_t    produces "count" = m_t
with U an arithmetic unit (NAC, NALU, NAU, NMU); no squashing on m. Where an episode starts, a core
zeroes its own state before the step. The counter cores compute in float32 even under a bfloat16
autocast, so that the count stays exact (bfloat16 holds integers exactly only up to 256).

Every core class here is its own factory, called as a user's is: (inputs, input_widths, size, wiring).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import torch
from torch import Tensor, nn

from nalu_rl.agents.registry import register_core
from nalu_rl.agents.wiring import COUNT_SIGNAL, MEMORY_SIGNAL, Wiring
from nalu_rl.units import BinaryGate, GridSnap, RecurrentUnit, make_unit, run_in_float32

SEQUENCE_SIGNALS = ("encoder", "stimulus", "bias")
CORE_SIGNALS = (MEMORY_SIGNAL, COUNT_SIGNAL)


class Core(nn.Module):
    """A recurrent core: `inputs` names the signals it reads (in concat order), `signal` the one it produces.

    prepare(sequence) does the work that needs no state for all T steps at once; step(...) then
    advances the state by one step. The state is a tuple of [B, state_size] tensors named
    `state_names` (unique within a model). A core's `signal` is that of the slot the model puts it
    in ("memory" or "count"); the classes here name the slot they were written for. The model holds
    its cores as submodules (`ActorCritic.cores`), so everything a core registers (layers, bare
    parameters, buffers) is trained, saved and moved with the model.
    """

    signal: str = ""

    def __init__(self, inputs: tuple[str, ...], state_names: tuple[str, ...], state_size: int) -> None:
        super().__init__()
        unknown = [name for name in inputs if name not in SEQUENCE_SIGNALS + CORE_SIGNALS]
        if unknown:
            raise ValueError(f"unknown core inputs {unknown}; known: {SEQUENCE_SIGNALS + CORE_SIGNALS}")
        self.inputs = inputs
        self.state_names = state_names
        self.state_size = state_size

    @property
    def output_size(self) -> int:
        """The width of the signal the core produces (its state size unless a core says otherwise)."""
        return self.state_size

    @property
    def reads_cores(self) -> tuple[str, ...]:
        """The other cores' signals this core reads at each step."""
        return tuple(name for name in self.inputs if name in CORE_SIGNALS)

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """The signals `step` reads from its `signals` argument: all its inputs, unless a core uses
        `prepare` for some (then the rest)."""
        return self.inputs

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """The zero state of `batch_size` episodes."""
        return tuple(torch.zeros(batch_size, self.state_size, device=device) for _ in self.state_names)

    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """Per-step precomputed inputs (T tensors) from the [T, B, ...] sequence signals, or None."""
        return None

    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """One step: this step's prepared input, the signals [B, ...] of `stepwise_inputs`, the state and
        keep [B, 1] (0 where an episode starts, which zeroes the state first) -> (output, next state).
        """
        raise NotImplementedError

    def unroll(
        self, prepared: Sequence[Tensor] | Tensor | None, state: tuple[Tensor, ...], keep: Tensor
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """All T steps of a core that reads nothing at step time (no `stepwise_inputs`) and that no
        other core reads: `prepare`'s output, the state and keep [T, B, 1] -> (outputs [T, B, ...],
        the state after the last step). Steps one step at a time; a core whose steps can be computed
        together overrides it."""
        outputs = []
        for t, keep_step in enumerate(keep.unbind(0)):
            output, state = self.step(None if prepared is None else prepared[t], {}, state, keep_step)
            outputs.append(output)
        return torch.stack(outputs), state

    def extra_repr(self) -> str:
        return f"inputs={self.inputs}, signal={self.signal!r}, state_names={self.state_names}"


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

    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
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

    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
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


class CounterCore(Core):
    """A counter: it produces "count" = m_t [B, size] and reads its own state only through its recurrence.

    By default `prepare` gives x_t itself, the concat of its inputs, for all T steps at once when
    it reads no core.
    """

    signal = COUNT_SIGNAL

    def __init__(self, state_names: tuple[str, ...], inputs: tuple[str, ...], size: int) -> None:
        super().__init__(inputs, state_names, size)
        if COUNT_SIGNAL in inputs:
            raise ValueError("a counter core reads its own state through its recurrence, not as an input")

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """All its inputs when it reads another core (the concat is then built step by step), else none."""
        return self.inputs if self.reads_cores else ()

    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """x_t, one [B, width] tensor per step, when it reads no core; else None."""
        if self.reads_cores:
            return None
        return torch.cat([sequence[name] for name in self.inputs], -1).unbind(0)

    def step_input(self, prepared: Tensor | None, signals: dict[str, Tensor]) -> Tensor:
        """x_t: the prepared one, or the concat of this step's signals."""
        if prepared is not None:
            return prepared
        return torch.cat([signals[name] for name in self.inputs], -1)


class AccumulatorCore(CounterCore):
    """m_t = m_{t-1} + U(x_t): an identity recurrence, so a count cannot decay.

    When x_t depends on no other core, the increments U(x_t) of all T steps are one unit call.
    The state is named after the unit (`wiring.unit`).
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__((wiring.unit,), inputs, size)
        self.counter_unit = make_unit(wiring.unit, input_width(inputs, input_widths), size)

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """The increments U(x_t), one [B, size] tensor per step, when x_t reads no core; else None."""
        if self.reads_cores:
            return None
        return self.counter_unit(torch.cat([sequence[name] for name in self.inputs], -1)).unbind(0)

    @run_in_float32
    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """m_t = m_{t-1} + U(x_t), with `prepared` the increment when it was computed ahead."""
        m = state[0] * keep
        increment = prepared if prepared is not None else self.counter_unit(self.step_input(None, signals))
        m = m + increment
        return m, (m,)


class RecurrentUnitCore(CounterCore):
    """m_t = U([x_t, m_{t-1}]): a learned linear recurrence (with a NAC or NAU), which can decay.

    The state is named after the unit (`wiring.unit`).
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__((wiring.unit,), inputs, size)
        self.counter_unit = RecurrentUnit(wiring.unit, input_width(inputs, input_widths), size)

    @run_in_float32
    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """m_t = U([x_t, m_{t-1}])."""
        m = self.counter_unit.step(self.step_input(prepared, signals), state[0] * keep)
        return m, (m,)


class LinearRecurrence(nn.Module):
    """The parameters of a diagonal complex linear recurrence of `size` modes on `input_width` inputs.

    lambda_j = exp(-exp(nu_j) + i exp(theta_j)), so |lambda_j| < 1 whatever the weights: each mode
    is a stable, slowly decaying rotation. Following the LRU's initialisation for long memories,
    |lambda| starts uniform on the ring [0.9, 0.999] (by area) and the phase in [0, pi/10];
    gamma = sqrt(1 - |lambda|^2) (stored as its log) keeps the state's scale that of the input; B and
    C are complex Gaussian with variance 1 / (2 * input_width) and 1 / size (real and imaginary part
    each), D real Gaussian with variance 1 / input_width.
    """

    def __init__(self, input_width: int, size: int, r_min: float = 0.9, r_max: float = 0.999) -> None:
        super().__init__()
        radius_squared = torch.empty(size).uniform_(r_min**2, r_max**2)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(radius_squared)))
        self.theta_log = nn.Parameter(torch.log(torch.empty(size).uniform_(1e-4, math.pi / 10)))
        self.gamma_log = nn.Parameter(0.5 * torch.log(1 - radius_squared))
        self.input_real = nn.Parameter(torch.randn(size, input_width) / math.sqrt(2 * input_width))
        self.input_imag = nn.Parameter(torch.randn(size, input_width) / math.sqrt(2 * input_width))
        self.output_real = nn.Parameter(torch.randn(size, size) / math.sqrt(size))
        self.output_imag = nn.Parameter(torch.randn(size, size) / math.sqrt(size))
        self.skip = nn.Parameter(torch.randn(size, input_width) / math.sqrt(input_width))

    def eigenvalues(self) -> tuple[Tensor, Tensor]:
        """(real, imaginary) parts of lambda [size]."""
        modulus = torch.exp(-torch.exp(self.nu_log))
        angle = torch.exp(self.theta_log)
        return modulus * torch.cos(angle), modulus * torch.sin(angle)

    def drive(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """gamma * B x [..., size], as (real, imaginary)."""
        gamma = torch.exp(self.gamma_log)
        return gamma * (x @ self.input_real.T), gamma * (x @ self.input_imag.T)


class LinearRecurrenceCore(CounterCore):
    """The LRU in the counter's slot: a linear state without the NAC's arithmetic prior.

    z_t = lambda * z_{t-1} + gamma * B x_t and m_t = Re(C z_t) + D x_t, with z complex [size] and
    lambda diagonal (see `LinearRecurrence`); the state is (Re z, Im z). Like the accumulator it is
    linear in its inputs, so a count is within its reach; unlike it, every mode decays (|lambda| < 1)
    and its weights have no pull towards integers.
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("lru_real", "lru_imag"), inputs, size)
        self.linear_recurrence = LinearRecurrence(input_width(inputs, input_widths), size)

    @run_in_float32
    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """z_t from z_{t-1}; returns m_t = Re(C z_t) + D x_t and the state (Re z_t, Im z_t)."""
        recurrence = self.linear_recurrence
        x = self.step_input(prepared, signals)
        real, imag = state[0] * keep, state[1] * keep
        lambda_real, lambda_imag = recurrence.eigenvalues()
        drive_real, drive_imag = recurrence.drive(x)
        real, imag = (
            lambda_real * real - lambda_imag * imag + drive_real,
            lambda_imag * real + lambda_real * imag + drive_imag,
        )
        m = real @ recurrence.output_real.T - imag @ recurrence.output_imag.T + x @ recurrence.skip.T
        return m, (real, imag)


class EventCounterCore(CounterCore):
    """A count of learned events: what to count is learned, and the count stays exact at any length.

    Per step t, with x_t = [the encoder's features, the stimulus clamped to [-1, 1]] and s_t the raw
    stimulus (absent where the observation has none):
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
    PHASE_BITS = 2
    EVENT_BIAS = 1.0
    INCREMENT_GRID = 0.5
    INCREMENT_TOLERANCE = 0.05
    INCREMENT_BOUND = 1.0

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("learned_count", "learned_events", "learned_phase"), inputs, size)
        if self.reads_cores:
            raise ValueError(f"the event counter reads the observation only (encoder, stimulus): {inputs}")
        if "bias" in inputs:
            raise ValueError("the event counter learns its constant events itself; do not give it 'bias'")
        self.stimulus_width = input_widths["stimulus"] if "stimulus" in inputs else 0
        self.gate_input_width = input_width(inputs, input_widths)
        if self.gate_input_width < 1:
            raise ValueError("the event counter needs an input to learn its events from")
        self.phase_gate = BinaryGate(self.gate_input_width + self.PHASE_BITS, self.PHASE_BITS)
        self.event_gate = BinaryGate(
            self.gate_input_width + self.PHASE_BITS, self.EVENTS, initial_bias=self.EVENT_BIAS
        )
        self.counter_unit = make_unit(wiring.unit, self.stimulus_width + 2 * self.EVENTS, size)
        self.increment_snap = GridSnap(self.INCREMENT_GRID, self.INCREMENT_TOLERANCE, self.INCREMENT_BOUND)
        # What every step applies, derived from the parameters by `prepare` (`_derived_weights`).
        self._weights: _EventCounterWeights | None = None
        self._weights_key: tuple | None = None

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
        for gate in (self.phase_gate, self.event_gate):
            gate.forget_pre_activations()
        self.increment_snap.forget_values()
        # The gates read the stimulus saturated, so a T of 1000 looks to them like one of 5.
        x = torch.cat(
            [_saturated(name, sequence[name]) for name in self.inputs],
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
        width = self.gate_input_width
        gates = (self.phase_gate, self.event_gate)
        from_stimulus = from_events = None
        if self.counter_unit.is_linear:
            from_stimulus, from_events = self.counter_unit.weight.split(
                [self.stimulus_width, 2 * self.EVENTS], dim=-1
            )
        weights = _EventCounterWeights(
            from_x=torch.cat([gate.linear.weight[:, :width] for gate in gates]),
            from_x_bias=torch.cat([gate.linear.bias for gate in gates]),
            phase_to_phase=self.phase_gate.linear.weight[:, width:].T,
            phase_to_events=self.event_gate.linear.weight[:, width:].T,
            from_stimulus=from_stimulus,
            from_events=from_events,
        )
        self._weights, self._weights_key = weights, key
        return weights

    @run_in_float32
    def step(
        self,
        prepared: Tensor | None,
        signals: dict[str, Tensor],
        state: tuple[Tensor, ...],
        keep: Tensor,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """p_t, e_t and m_t from the prepared step and (m_{t-1}, p_{t-1}); returns [m_t, e_t, p_t]."""
        count, phase = state[0] * keep, state[2] * keep
        from_stimulus, phase_from_x, event_from_x = self._split_prepared(prepared)
        phase = self.phase_gate.events(phase_from_x + phase @ self._weights.phase_to_phase)
        events = self.event_gate.events(event_from_x + phase @ self._weights.phase_to_events)
        count = count + self._increment(from_stimulus, events)
        return torch.cat([count, events, phase], -1), (count, events, phase)

    @run_in_float32
    def unroll(
        self, prepared: Tensor, state: tuple[Tensor, ...], keep: Tensor
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """`step` over all T steps, with only the phase (its own recurrence) computed step by step:
        the events, their increments and the count of all T steps are each one computation (one
        step, as an actor takes, goes through `step`: fewer operations)."""
        if keep.shape[0] == 1:
            return super().unroll(prepared, state, keep)
        from_stimulus, phase_from_x, event_from_x = self._split_prepared(prepared)
        phase, phases = state[2], []
        phase_to_phase = self._weights.phase_to_phase
        for t, keep_step in enumerate(keep.unbind(0)):
            phase = self.phase_gate.events(phase_from_x[t] + (phase * keep_step) @ phase_to_phase)
            phases.append(phase)
        phases = torch.stack(phases)
        events = self.event_gate.events(event_from_x + phases @ self._weights.phase_to_events)
        counts = sum_since_reset(self._increment(from_stimulus, events), keep, state[0])
        return torch.cat([counts, events, phases], -1), (counts[-1], events[-1], phases[-1])

    def _split_prepared(self, prepared: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """`prepare`'s output -> (the stimulus's part of the increment, or the raw stimulus where
        the unit is not linear; the phase gate's pre-activation from x; the event gate's)."""
        linear = self._weights.from_events is not None
        return prepared.split(
            [self.state_size if linear else self.stimulus_width, self.PHASE_BITS, self.EVENTS], dim=-1
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
    phase_to_phase: Tensor  # [PHASE_BITS, PHASE_BITS], applied as p_{t-1} @ it
    phase_to_events: Tensor  # [PHASE_BITS, EVENTS], applied as p_t @ it
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


def input_width(inputs: tuple[str, ...], input_widths: Mapping[str, int]) -> int:
    """The width of the concat of `inputs`."""
    return sum(input_widths[name] for name in inputs)


# The project's cores, registered as a user's core is: each class is its own factory.
register_core("lstm", LSTMCore)
register_core("gru", GRUCore)
register_core("accumulator", AccumulatorCore)
register_core("recurrent", RecurrentUnitCore)
register_core("linear-recurrence", LinearRecurrenceCore)
register_core("event-count", EventCounterCore)
