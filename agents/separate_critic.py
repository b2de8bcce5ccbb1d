"""`SeparateCritic`: a critic with an encoder and a memory core of its own.

With a wiring's `critic_separate` the value is computed apart from everything the actor reads:
  f'_t = encoder'(o_t)                    an encoder of the actor's kind, with its own weights
  h'_t = core'(f'_t, s_t; state'_{t-1})   the memory slot's core (kind and size), its own weights
  value_t = head(concat of the critic's inputs among f'_t, s_t, h'_t [, which head plays])
(sb3-contrib's RecurrentPPO builds its critic this way by default). The value loss then trains these
parts alone: it can shape the critic's features as it likes without moving the actor's. Without a
core of its own (a wiring's `critic_own_memory` off), h'_t is the actor's memory h_t with its
gradient stopped: the critic reads what the actor remembers but cannot change it, and the learner
steps one memory core instead of two.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents.core import SEQUENCE_SIGNALS, Core
from nalu_rl.agents.wiring import MEMORY_SIGNAL, Wiring

STATE_PREFIX = "critic_"
"""Prefixed to the critic core's state names, which would otherwise repeat the actor's."""


class SeparateCritic(nn.Module):
    """The critic's own encoder (any module from the transformed observation to [T, B, F]), layer
    norm (or None), memory core (or None: it reads the actor's) and head; `inputs` are the critic's
    inputs (among "encoder", "stimulus", "memory"), concatenated in that order for the head, followed
    with `reads_head` by which head plays the episode (1: the student; `nalu_rl.agents.count_student`).

    forward(observation, stimulus, keep, state, memory, student_plays) -> (value [T, B], the core's
    state after the last step); `memory` [T, B, H] is the actor's memory, read (detached) when there is
    no core.
    """

    def __init__(
        self,
        encoder: nn.Module,
        feature_norm: nn.Module | None,
        core: Core | None,
        head: nn.Module,
        inputs: tuple[str, ...],
        reads_head: bool = False,
    ) -> None:
        super().__init__()
        if core is not None and core.reads_cores:
            raise ValueError(f"the critic's own core reads only the observation, not {core.reads_cores}")
        self.encoder = encoder
        self.feature_norm = feature_norm
        self.core = core
        self.head = head
        self.inputs = inputs
        self.reads_head = reads_head

    @property
    def state_names(self) -> tuple[str, ...]:
        """The core's state names, prefixed with "critic_" (none without a core)."""
        return () if self.core is None else tuple(STATE_PREFIX + name for name in self.core.state_names)

    def initial_state(self, batch_size: int, device) -> tuple[Tensor, ...]:
        """The core's zero state for `batch_size` episodes (empty without a core)."""
        return () if self.core is None else self.core.initial_state(batch_size, device)

    def forward(
        self,
        observation: Tensor | dict[str, Tensor],
        stimulus: Tensor,
        keep: Tensor,
        state: tuple[Tensor, ...],
        memory: Tensor | None = None,
        student_plays: Tensor | None = None,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """The value [T, B] of T steps: the observation as the encoder takes it, the stimulus
        [T, B, S], keep [T, B, 1] (0 where an episode starts), the core's state, the actor's memory
        (read without a core of its own) and, with `reads_head`, which head plays [T, B]."""
        features = self.encoder(observation)
        if self.feature_norm is not None:
            features = self.feature_norm(features)
        bias = keep.new_ones(*keep.shape[:2], 1)
        signals = {"encoder": features, "stimulus": stimulus, "bias": bias}
        if self.core is not None:
            sequence = {name: signals[name] for name in SEQUENCE_SIGNALS}
            signals[MEMORY_SIGNAL], state = self.core.unroll(sequence, state, keep)
        elif memory is not None:
            signals[MEMORY_SIGNAL] = memory.detach()
        inputs = [signals[name] for name in self.inputs]
        if self.reads_head:
            if student_plays is None:
                raise ValueError("this critic reads which head plays: pass student_plays")
            inputs.append(student_plays.unsqueeze(-1).to(inputs[0].dtype))
        value = self.head(torch.cat(inputs, -1)).squeeze(-1)
        return value, state


def wiring_with_critic(wiring: Wiring, choice: str) -> Wiring:
    """`wiring` with the critic `choice` asks for (train's --separate-critic): "on" a critic of its own
    (ValueError where the wiring cannot take one), "off" the critic as wired, "auto" one of its own
    wherever the wiring can take it (`Wiring.takes_separate_critic`)."""
    if choice not in ("auto", "on", "off"):
        raise ValueError(f"the critic choice must be auto, on or off, got {choice!r}")
    if choice == "on" and not wiring.takes_separate_critic:
        raise ValueError(
            "a critic of its own copies the memory core: this agent's policy reads none, or its critic reads"
            " the count"
        )
    if choice == "off" or wiring.critic_separate:
        return wiring
    return replace(wiring, critic_separate=wiring.takes_separate_critic)
