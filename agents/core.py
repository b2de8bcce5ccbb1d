"""The recurrent core's contract: what a core reads, the state it owns, and its step.

A core reads named signals and produces one. The sequence signals (SEQUENCE_SIGNALS: "encoder",
"stimulus", "bias") are known for all T steps at once; the core signals (CORE_SIGNALS: "memory" =
h_t, "count" = m_t) exist step by step. The project's cores subclass `Core` in one module per
family (`memory_cores`, `counter_cores`, `event_counter`) and are registered in `cores`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn

from nalu_rl.agents.wiring import COUNT_SIGNAL, MEMORY_SIGNAL

SEQUENCE_SIGNALS = ("encoder", "stimulus", "bias")
CORE_SIGNALS = (MEMORY_SIGNAL, COUNT_SIGNAL)

Signals = dict[str, Tensor]
"""A step's signals by name, each [B, ...]."""
State = tuple[Tensor, ...]
"""A core's state: [B, state_size] tensors in the order of `state_names`."""
StepResult = tuple[Tensor, State]
"""What a step (or an unroll) returns: the output and the next state."""


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

    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """One step: this step's prepared input, the signals [B, ...] of `stepwise_inputs`, the state and
        keep [B, 1] (0 where an episode starts, which zeroes the state first) -> (output, next state).
        """
        raise NotImplementedError

    def unroll(self, sequence: dict[str, Tensor], state: State, keep: Tensor) -> StepResult:
        """All T steps of a core that reads no other core and that no other core reads: the sequence
        signals [T, B, ...], the state and keep [T, B, 1] -> (outputs [T, B, ...], the state after the
        last step). Prepares, then steps one step at a time (`step` given the sequence's values of
        `stepwise_inputs`); a core whose steps can be computed together overrides it, or
        `unroll_prepared`."""
        prepared = self.prepare(sequence)
        if not self.stepwise_inputs:
            return self.unroll_prepared(prepared, state, keep)
        read_at_step_time = {name: sequence[name] for name in self.stepwise_inputs}
        return self._step_through(prepared, read_at_step_time, state, keep)

    def unroll_prepared(
        self, prepared: Sequence[Tensor] | Tensor | None, state: State, keep: Tensor
    ) -> StepResult:
        """`unroll` of a core that reads nothing at step time, from `prepare`'s output: steps one step at
        a time unless a core overrides it."""
        return self._step_through(prepared, {}, state, keep)

    def _step_through(
        self, prepared: Sequence[Tensor] | Tensor | None, sequence: Signals, state: State, keep: Tensor
    ) -> StepResult:
        """`step` over T steps: `prepare`'s output, the [T, B, ...] signals it reads at step time."""
        outputs = []
        for t, keep_step in enumerate(keep.unbind(0)):
            signals = {name: values[t] for name, values in sequence.items()}
            output, state = self.step(None if prepared is None else prepared[t], signals, state, keep_step)
            outputs.append(output)
        return torch.stack(outputs), state

    def extra_repr(self) -> str:
        return f"inputs={self.inputs}, signal={self.signal!r}, state_names={self.state_names}"


def input_width(inputs: tuple[str, ...], input_widths: Mapping[str, int]) -> int:
    """The width of the concat of `inputs`."""
    return sum(input_widths[name] for name in inputs)
