"""Makes docs/journal/2026-12-06-learned-count-cue-tasks.md, "2026-12-06: `learned-count` on a cue task...".

The event-counter variants tried on ReadySetGo (a cue task: no stimulus entry), registered for
`--import`:

    cd scripts/experiments && python -m nalu_rl.train --import event_counter_variants \
        --agent learned-count-memory --env-id nalu_rl/ReadySetGo-v0 --seed 0 --total-steps 3000000

Each is `learned-count` (its training defaults too) with one change:
- learned-count-memory: the event and phase gates also read the LSTM's h_t (the LSTM the critic reads).
- learned-count-memory-b0: the same with the events starting off (gate bias 0, not 1).
- learned-count-critic: no LSTM; the critic reads the encoder and the counter's output, so its value
  loss reaches the events and the phase at every step.
- learned-count-nlatch0: the phase bits start as latches (each holds its value: self weight 2, bias
  -1; 4 bits), the gates read the encoder's features layer-normalised (a cue then moves a
  pre-activation by about one), the events start off.
And one design of several changes: count-beside-memory (below).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from nalu_rl.agents.catalog import LEARNED_COUNT, LEARNED_COUNT_TRAINING
from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.agents.registry import register_agent, register_core


class EventsStartOffCore(EventCounterCore):
    """The event counter with its events starting off (gate bias 0): they follow the input's spread."""

    EVENT_BIAS = 0.0


class LatchedPhaseCore(EventsStartOffCore):
    """Events starting off; 4 phase bits that start as latches (self weight 2, bias -1: a bit holds
    its value until its input moves it by more than 1); the gates read the encoder's features
    layer-normalised, their weights on them scaled by 1.5."""

    PHASE_BITS = 4
    INPUT_SCALE = 1.5

    def __init__(self, inputs, input_widths, size, wiring) -> None:
        super().__init__(inputs, input_widths, size, wiring)
        width = self.gate_input_width
        with torch.no_grad():
            linear = self.phase_gate.linear
            linear.weight[:, :width] *= self.INPUT_SCALE
            linear.weight[:, width:] = 2.0 * torch.eye(self.PHASE_BITS)
            linear.bias.fill_(-1.0)

    def prepare(self, sequence: dict[str, torch.Tensor]) -> torch.Tensor:
        encoder = sequence["encoder"].float()
        normalised = torch.nn.functional.layer_norm(encoder, encoder.shape[-1:])
        return super().prepare({**sequence, "encoder": normalised})


register_core("event-counter-b0", EventsStartOffCore)
register_core("event-counter-nlatch0", LatchedPhaseCore)

_READS_MEMORY = ("encoder", "stimulus", "memory")
_VARIANTS = (
    (
        "learned-count-memory",
        replace(LEARNED_COUNT, counter_inputs=_READS_MEMORY),
        "learned-count whose event and phase gates also read the LSTM's h_t.",
    ),
    (
        "learned-count-memory-b0",
        replace(LEARNED_COUNT, counter="event-counter-b0", counter_inputs=_READS_MEMORY),
        "learned-count-memory with the events starting off.",
    ),
    (
        "learned-count-critic",
        replace(LEARNED_COUNT, memory_inputs=(), critic_inputs=("encoder", "count"), critic_hidden=128),
        "learned-count without an LSTM: the critic reads the encoder and the counter's output.",
    ),
    (
        "learned-count-nlatch0",
        replace(LEARNED_COUNT, counter="event-counter-nlatch0"),
        "learned-count with latching phase bits on normalised features, the events starting off.",
    ),
)
for _name, _wiring, _summary in _VARIANTS:
    register_agent(_name, _wiring, _summary, training_defaults=LEARNED_COUNT_TRAINING)

# learned-count's training options with the entropy bonus kept at its start (not falling to 0).
_OPEN_TRAINING = {**LEARNED_COUNT_TRAINING, "entropy_coef_final": None}

# learned-count-memory with one change: the entropy bonus stays at its start instead of falling to 0,
# so that the policy keeps pressing while its gates still move (it stopped pressing at about 1.2M).
register_agent(
    "learned-count-memory-open",
    replace(LEARNED_COUNT, counter_inputs=_READS_MEMORY),
    "learned-count-memory with a constant entropy bonus.",
    training_defaults=_OPEN_TRAINING,
)

# Not one change but a design: the policy reads the LSTM beside the count, so that it can learn the
# training range as `lstm` does while the events (reading the LSTM) learn what to count; the entropy
# bonus stays at its start (as `lstm`'s), so the policy keeps pressing while the gates still move.
register_agent(
    "count-beside-memory",
    replace(LEARNED_COUNT, counter_inputs=_READS_MEMORY, actor_inputs=("memory", "count")),
    "learned-count-memory whose actor also reads the LSTM's h_t; a constant entropy bonus.",
    training_defaults=_OPEN_TRAINING,
)
