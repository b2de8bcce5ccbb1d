"""Makes docs/journal/2026-12-08-segment-timer-held-out-round-2.md, "The design fixed for round 2".

A counter with nothing to learn about time itself (`SegmentTimerCore`, the core "segment-timer"), and
the agent "segment-timer" that acts on it with no teacher, registered for `--import` with its
training defaults (`SEGMENT_TIMER_TRAINING`):

    cd scripts/experiments && python -m nalu_rl.train --import segment_timer \
        --agent segment-timer --env-id nalu_rl/ReadySetGo-v0 --seed 0

The variants `segment-timer-128`, `-256` and `-wide` are the journal's pilots.

The trial is cut into segments where the observation changes: two learned gates read the change of
the frame and the frame, c_t = step(W [x_t - x_{t-1}, x_t] + b), the first starting as "some value
rose" (+2 on every change, bias -1), the second as "some value fell"; a step where either fires ends
a segment. The phase k_t (one-hot over BOUNDARIES + 1) is the number of segments ended, capped, and
register j holds the number of steps spent in segment j; where the observation has a stimulus
entry, one more register holds its sum (on TimeTrack: T from the onset). All of it is exact at any T
once the gates are exactly 0 or 1 (they are: straight-through steps). What the policy reads are the
registers compared at small integer ratios, R_j - g R_i for every ordered pair i != j and g in GAINS,
and each register alone, each clamped to +-c (c in CLIPS) and scaled to [-1, 1]: a difference 0 at the
due time is the same feature at T = 1000 as at T = 8. The actor reads the frame, those comparisons,
the phase and the gates; the critic reads the LSTM and the same. Nothing in it reads a task's id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import torch
from torch import Tensor

from nalu_rl.agents.catalog import A3C_TRAINING
from nalu_rl.agents.core import Signals, State, StepResult, input_width
from nalu_rl.agents.counter_cores import CounterCore
from nalu_rl.agents.event_counter import _saturated
from nalu_rl.agents.registry import register_agent, register_core
from nalu_rl.agents.wiring import Wiring
from nalu_rl.units import BinaryGate, run_in_float32


class SegmentTimerCore(CounterCore):
    """Exact step counts of the segments between changes of the frame, compared at integer ratios.

    Produces [comparisons, phase, gates]: the clamped comparisons of the registers (`comparisons`),
    the phase one-hot [BOUNDARIES + 1] and the two gates of the step.
    """

    BOUNDARIES = 7
    GAINS = (1.0, 2.0, 3.0)
    CLIPS = (3.0,)

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("segment_phase", "segment_steps", "segment_frame"), inputs, size)
        if self.reads_cores or "bias" in inputs or "encoder" not in inputs:
            raise ValueError(f"the segment timer reads the frame (encoder) and the stimulus, got {inputs}")
        self.frame_width = input_width(inputs, input_widths)
        self.stimulus_width = input_widths["stimulus"] if "stimulus" in inputs else 0
        self.registers = self.BOUNDARIES + 1 + self.stimulus_width
        self.gate = BinaryGate(2 * self.frame_width, 2, initial_bias=-1.0)
        with torch.no_grad():
            self.gate.linear.weight.zero_()
            self.gate.linear.weight[0, : self.frame_width] = 2.0
            self.gate.linear.weight[1, : self.frame_width] = -2.0
        pairs = ~torch.eye(self.registers, dtype=torch.bool)
        self.register_buffer("pairs", pairs, persistent=False)
        first_phase = torch.zeros(1, self.BOUNDARIES + 1)
        first_phase[0, 0] = 1.0
        self.register_buffer("first_phase", first_phase, persistent=False)

    @property
    def comparisons(self) -> int:
        """How many clamped comparisons a step produces."""
        n = self.registers
        return (n * (n - 1) * len(self.GAINS) + n) * len(self.CLIPS)

    @property
    def output_size(self) -> int:
        return self.comparisons + self.BOUNDARIES + 1 + 2

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """Phase 0, empty registers, a zero frame (replaced by the first frame at an episode's start)."""
        return (
            self.first_phase.to(device).expand(batch_size, -1).clone(),
            torch.zeros(batch_size, self.registers, device=device),
            torch.zeros(batch_size, self.frame_width, device=device),
        )

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> Tensor:
        """[the frame with the stimulus clamped to [-1, 1], the raw stimulus] for all steps: [T, B, ...]."""
        self.gate.forget_pre_activations()
        frame = [_saturated(name, sequence[name].float()) for name in self.inputs]
        raw = [sequence["stimulus"].float()] if self.stimulus_width else []
        return torch.cat([*frame, *raw], -1)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """One step: the gates on the frame's change, the phase, the registers, the comparisons."""
        frame, stimulus = prepared.split([self.frame_width, self.stimulus_width], dim=-1)
        phase = torch.where(keep > 0, state[0], self.first_phase)
        steps = state[1] * keep
        previous = torch.where(keep > 0, state[2], frame)  # no change at an episode's first step
        gates = self.gate(torch.cat([frame - previous, frame], -1))
        boundary = 1.0 - (1.0 - gates[:, :1]) * (1.0 - gates[:, 1:])
        shifted = torch.cat([torch.zeros_like(phase[:, :1]), phase[:, :-1]], -1)
        shifted = shifted + torch.nn.functional.pad(phase[:, -1:], (self.BOUNDARIES, 0))  # capped
        phase = phase * (1.0 - boundary) + shifted * boundary
        steps = steps + torch.cat([phase, stimulus], -1)
        output = torch.cat([self.compare(steps), phase, gates], -1)
        return output, (phase, steps, frame)

    def compare(self, steps: Tensor) -> Tensor:
        """R_j - g R_i for every ordered pair i != j and gain g, and each R_j, clamped and scaled."""
        differences = [
            (steps.unsqueeze(-2) - gain * steps.unsqueeze(-1))[..., self.pairs] for gain in self.GAINS
        ]
        raw = torch.cat([*differences, steps], -1)
        return torch.cat([(raw / clip).clamp(-1.0, 1.0) for clip in self.CLIPS], -1)


class WideSegmentTimerCore(SegmentTimerCore):
    """The segment timer whose comparisons are read twice: clamped at 3 and at 10."""

    CLIPS = (3.0, 10.0)


register_core("segment-timer", SegmentTimerCore)
register_core("segment-timer-wide", WideSegmentTimerCore)

# The wiring of the first pilots (clip3, clip3-10m, wide): an actor hidden layer of 128.
SEGMENT_TIMER_128 = Wiring(
    encoder="flat",
    memory_inputs=("encoder", "stimulus"),
    counter="segment-timer",
    counter_inputs=("encoder", "stimulus"),
    actor_inputs=("encoder", "count"),
    critic_inputs=("memory", "count"),
    actor_hidden=128,
)
# On TimeTrack the actor has to tell, from the flat grid, where the target is from the agent; a wider
# hidden layer learned more of that range in 10M steps (of the ceiling on 5..12, 128: 0.78; 256: 0.84
# and 0.80; 512: 0.84; journal 2026-12-08).
SEGMENT_TIMER = dataclasses.replace(SEGMENT_TIMER_128, actor_hidden=512)
# 10M steps, the entropy bonus falling to 0 over them, no stop at a target success: at T = 1000 the
# policy waits about 2000 steps on the same inputs, and any press probability left there is spent.
SEGMENT_TIMER_TRAINING = {
    **A3C_TRAINING,
    "total_steps": 10_000_000,
    "entropy_coef_final": 0.0,
    "target_fraction": 2.0,
}

register_agent(
    "segment-timer",
    SEGMENT_TIMER,
    "Exact step counts of the segments between changes of the frame, compared at integer ratios; the "
    "actor reads them and the frame, the critic the LSTM too; no teacher.",
    training_defaults=SEGMENT_TIMER_TRAINING,
)
for name, wiring, description in (
    ("segment-timer-128", SEGMENT_TIMER_128, "an actor hidden layer of 128"),
    (
        "segment-timer-256",
        dataclasses.replace(SEGMENT_TIMER, actor_hidden=256),
        "an actor hidden layer of 256",
    ),
    (
        "segment-timer-wide",
        dataclasses.replace(SEGMENT_TIMER_128, counter="segment-timer-wide"),
        "an actor of 128 reading each comparison clamped at 3 and at 10",
    ),
):
    register_agent(
        name, wiring, f"segment-timer with {description}.", training_defaults=SEGMENT_TIMER_TRAINING
    )
