"""Makes docs/journal/2026-12-07-count-student.md, "2026-12-07: a count taught by the LSTM's head".

Agents whose count is taught at every step by a head on the LSTM (`Wiring.teacher_inputs`,
`nalu_rl.agents.count_student`), registered for `--import`:

    cd scripts/experiments && python -m nalu_rl.train --import count_student_variants \
        --agent count-student --env-id nalu_rl/ReadySetGo-v0 --seed 0 --total-steps 3000000

- count-student: `learned-count` (its counter on the encoder and the stimulus, its actor on the
  encoder and the clamped count) with a teacher head, an MLP(128) on the LSTM's h_t; the policy acts
  with the teacher (the handover stays 0 in training) and the actor head learns to imitate it; the
  entropy bonus stays at its start.
- count-student-memory: the same with the event and phase gates also reading the LSTM's h_t.
- count-student-memory-detached: the same with the gates reading h_t with its gradient stopped, so
  that the imitation loss cannot move the LSTM that the teacher reads.
- count-student-linear: count-student-memory-detached with a linear teacher head, as `lstm`'s actor.
- count-student-apart: count-student-linear whose counter reads every input (the encoder too) with its
  gradient stopped: with the actor head's inputs also stopped (the library's since this variant),
  the imitation loss trains the counter and the actor head only, never what the teacher reads.
- count-student-toggle: count-student-linear whose counter reads the observation alone (no h_t: the
  gates cannot copy the teacher's timing from it) and whose phase bits toggle: each bit flips at a
  step where its gate (on the layer-normalised encoder features; starting off, bias -1) fires,
  p_t = p_{t-1} XOR c_t, so the gates learn which frames mark a new phase and the phase holds
  between them by construction.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from nalu_rl.agents.catalog import LEARNED_COUNT, LEARNED_COUNT_TRAINING
from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.agents.registry import register_agent, register_core
from nalu_rl.agents.wiring import MEMORY_SIGNAL


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


register_core("event-counter-detached-memory", DetachedMemoryEventCounterCore)
register_core("event-counter-toggle", ToggledPhaseEventCounterCore)
register_core("event-counter-detached", DetachedEventCounterCore)

# learned-count's training options with the entropy bonus kept at its start (not falling to 0).
_OPEN_TRAINING = {**LEARNED_COUNT_TRAINING, "entropy_coef_final": None}

COUNT_STUDENT = replace(LEARNED_COUNT, teacher_inputs=("memory",), teacher_hidden=128)
_READS_MEMORY = ("encoder", "stimulus", "memory")

register_agent(
    "count-student",
    COUNT_STUDENT,
    "learned-count whose actor head imitates a teacher head on the LSTM; the teacher acts.",
    training_defaults=_OPEN_TRAINING,
)
register_agent(
    "count-student-memory",
    replace(COUNT_STUDENT, counter_inputs=_READS_MEMORY),
    "count-student whose event and phase gates also read the LSTM's h_t.",
    training_defaults=_OPEN_TRAINING,
)
register_agent(
    "count-student-memory-detached",
    replace(COUNT_STUDENT, counter="event-counter-detached-memory", counter_inputs=_READS_MEMORY),
    "count-student whose event and phase gates read the LSTM's h_t with its gradient stopped.",
    training_defaults=_OPEN_TRAINING,
)
register_agent(
    "count-student-linear",
    replace(
        COUNT_STUDENT,
        counter="event-counter-detached-memory",
        counter_inputs=_READS_MEMORY,
        teacher_hidden=0,
    ),
    "count-student-memory-detached with a linear teacher head.",
    training_defaults=_OPEN_TRAINING,
)
register_agent(
    "count-student-apart",
    replace(COUNT_STUDENT, counter="event-counter-detached", counter_inputs=_READS_MEMORY, teacher_hidden=0),
    "count-student-linear whose counter reads every input with its gradient stopped.",
    training_defaults=_OPEN_TRAINING,
)
register_agent(
    "count-student-toggle",
    replace(COUNT_STUDENT, counter="event-counter-toggle", teacher_hidden=0),
    "count-student-linear whose counter reads the observation alone, with toggling phase bits.",
    training_defaults=_OPEN_TRAINING,
)
