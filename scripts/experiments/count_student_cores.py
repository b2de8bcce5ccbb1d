"""Makes docs/journal/2026-12-07-count-student.md, "2026-12-07: a count taught by the LSTM's head".

The experimental counters of the count-student variants (`count_student_variants.py`), registered
as cores under the names the journal's runs used; the last ones are the library's change counter
(`nalu_rl.agents.change_counter`) and grid NAU under their earlier names.

- count-student-short-toggle's core ("event-counter-change-short"): the change counter whose phase
  recurrence passes no gradient back to earlier steps: p_t = sg(p_{t-1}) XOR c_t, so a toggle learns
  from the count at the step it fires, not from every later step through the XOR's factor of +-1
  (the count's gradient was 5-40x every other part's).
- count-student-whole-steps' core, "change-counter-whole-steps", is the library's
  (`nalu_rl.agents.change_counter.WholeStepChangeCounterCore`; it was defined here first, the same).
- the carry variants' core ("change-counter-carry"): the whole-step change counter whose second
  phase bit toggles on its gate only where the first bit was on, p1_t = p1_{t-1} XOR (c1_t AND
  p0_{t-1}): where both gates fire on the same cue, the bits count the cues in binary ((p0 p1) = 00,
  10, 01, 11, the first bit the lower), so that the third cue of a trial has a phase of its own; with
  two independent toggles the phase after the third cue is the first interval's again.
"""

from __future__ import annotations

import torch

from nalu_rl.agents.change_counter import ChangeCounterCore, WholeStepChangeCounterCore
from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.agents.registry import register_core
from nalu_rl.agents.wiring import MEMORY_SIGNAL
from nalu_rl.units import GridNAU
from nalu_rl.units.registry import register_unit


class DetachedMemoryEventCounterCore(EventCounterCore):
    """The event counter whose gates read the memory core's h_t with its gradient stopped."""

    def step(self, prepared, signals, state, keep):
        if MEMORY_SIGNAL in signals:
            signals = {**signals, MEMORY_SIGNAL: signals[MEMORY_SIGNAL].detach()}
        return super().step(prepared, signals, state, keep)


class DetachedEventCounterCore(DetachedMemoryEventCounterCore):
    """The event counter reading every input (the encoder's features too) with its gradient stopped."""

    def prepare(self, sequence):
        return super().prepare({name: value.detach() for name, value in sequence.items()})


class ToggledPhaseEventCounterCore(EventCounterCore):
    """The event counter whose phase bits toggle where their gates fire: p_t = p_{t-1} XOR c_t with
    c_t = step(W_p x_t + b_p) (the gates read the layer-normalised encoder features and the stimulus,
    not the phase), written p_{t-1} + c_t - 2 p_{t-1} c_t so that the gradient reaches c_t; the
    gates start off (bias -1)."""

    def __init__(self, inputs, input_widths, size, wiring) -> None:
        super().__init__(inputs, input_widths, size, wiring)
        with torch.no_grad():
            self.phase_gate.linear.weight[:, self.gate_input_width :] = 0.0
            self.phase_gate.linear.bias.fill_(-1.0)

    def prepare(self, sequence):
        encoder = sequence["encoder"].float()
        normalised = torch.nn.functional.layer_norm(encoder, encoder.shape[-1:])
        return super().prepare({**sequence, "encoder": normalised})

    def next_phase(self, phase_from_x, phase):
        cue = self.phase_gate.events(phase_from_x)
        return phase + cue - 2.0 * phase * cue


class PhaseEventsToggleCounterCore(ToggledPhaseEventCounterCore):
    """The toggled-phase event counter whose events start as copies of the phase bits."""

    def __init__(self, inputs, input_widths, size, wiring) -> None:
        super().__init__(inputs, input_widths, size, wiring)
        width = self.gate_input_width
        with torch.no_grad():
            self.event_gate.linear.weight.zero_()
            self.event_gate.linear.weight[:, width:] = 2.0 * torch.eye(self.PHASE_BITS)
            self.event_gate.linear.bias.fill_(-1.0)


class IdentityToggleCounterCore(PhaseEventsToggleCounterCore):
    """The toggles fire at step(z) and pass the loss's gradient to z unchanged; no margin regulariser."""

    def next_phase(self, phase_from_x, phase):
        cue = (phase_from_x > 0).to(phase_from_x.dtype) + phase_from_x - phase_from_x.detach()
        return phase + cue - 2.0 * phase * cue


class PhaseCountCore(IdentityToggleCounterCore):
    """The identity toggles, and the phase bits themselves as the events the count adds."""

    def next_events(self, event_from_x, phase):
        return phase


class ChangeToggleCore(PhaseCountCore):
    """The phase-count core whose toggles read the change of the gates' input since the last step (no
    change at an episode's first step); W_p x_{t-1} is kept in the state ("event_previous")."""

    def __init__(self, inputs, input_widths, size, wiring) -> None:
        super().__init__(inputs, input_widths, size, wiring)
        self.state_names = (*self.state_names, "event_previous")

    def initial_state(self, batch_size, device=None):
        previous = torch.zeros(batch_size, self.PHASE_BITS, device=device)
        return (*super().initial_state(batch_size, device), previous)

    def _with_changes(self, prepared, previous, keep):
        """`prepared` [T, B, ...] with the toggles' pre-activations W_p (x_t - x_{t-1}) + b_p, and W_p x_T."""
        stimulus, phase_from_x, event_from_x = self._split_prepared(prepared)
        bias = self.phase_gate.linear.bias
        seen = phase_from_x - bias
        before = torch.where(keep > 0, torch.cat([previous.unsqueeze(0), seen[:-1]]), seen)
        return torch.cat([stimulus, seen - before + bias, event_from_x], -1), seen[-1]

    def step(self, prepared, signals, state, keep):
        changed, previous = self._with_changes(prepared.unsqueeze(0), state[3], keep.unsqueeze(0))
        output, inner = EventCounterCore.step(self, changed[0], signals, state[:3], keep)
        return output, (*inner, previous)

    def unroll_prepared(self, prepared, state, keep):
        changed, previous = self._with_changes(prepared, state[3], keep)
        if keep.shape[0] == 1:
            output, inner = EventCounterCore.step(self, changed[0], {}, state[:3], keep[0])
            return output.unsqueeze(0), (*inner, previous)
        output, inner = EventCounterCore.unroll_prepared(self, changed, state[:3], keep)
        return output, (*inner, previous)


class ShortToggleChangeCounterCore(ChangeCounterCore):
    """The change counter whose phase recurrence is cut for the gradient: p_t = sg(p_{t-1}) XOR c_t."""

    def next_phase(self, phase_from_x, phase):
        return super().next_phase(phase_from_x, phase.detach())


class CarryChangeCounterCore(WholeStepChangeCounterCore):
    """The whole-step change counter whose second bit toggles only where the first was on (docstring)."""

    def toggles(self, phase_from_x, phase):
        toggle = super().toggles(phase_from_x, phase)
        return torch.cat([toggle[..., :1], toggle[..., 1:] * phase[..., :1]], -1)


register_core("change-counter-carry", CarryChangeCounterCore)
# The last variants' counter and unit are the library's: the change counter ("change-counter") and the
# grid NAU ("grid-nau"), under the names the journal's runs used.
register_unit("grid-only-nau", GridNAU)
register_core("event-counter-change-detached", ChangeCounterCore)
register_core("event-counter-detached-memory", DetachedMemoryEventCounterCore)
register_core("event-counter-change", ChangeToggleCore)
register_core("event-counter-phase-count", PhaseCountCore)
register_core("event-counter-toggle-identity", IdentityToggleCounterCore)
register_core("event-counter-toggle-direct", PhaseEventsToggleCounterCore)
register_core("event-counter-toggle", ToggledPhaseEventCounterCore)
register_core("event-counter-detached", DetachedEventCounterCore)
register_core("event-counter-change-short", ShortToggleChangeCounterCore)
