"""A policy taught by a second head: the actor head (the student) learns at every step to imitate a
teacher head that reads other inputs, and the policy hands over from the teacher to the student.

Where the count can time a task beyond its training range but the reward alone rarely tells the
count's events what to count (a press rewarded once per episode), a head on a memory core (the LSTM)
may still learn the range. With the teacher's logits u_t (its head on `teacher_inputs`) and the
student's s_t (the actor head on `actor_inputs`, e.g. the encoder and the count), the policy is

    pi_t = (1 - w) * softmax(u_t) + w * softmax(s_t)

per action component, with w in [0, 1] the handover (a buffer, so that checkpoints and the actors'
copies hold it; 0 at the start). The imitation loss KL(softmax(u_t) || softmax(s_t)), the teacher's
side held fixed, reaches the student and through it the count and its events at every step, not
only at a rewarded press. The policy gradient reaches both heads through the mixture. The actor
head reads the shared features (all its inputs but the count) with their gradient stopped, so that
neither loss of the student moves the encoder or the memory the teacher acts on.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from nalu_rl.agents import distributions
from nalu_rl.agents.distributions import ActionSizes
from nalu_rl.agents.losses import masked_mean
from nalu_rl.units import run_in_float32


class CountStudent(nn.Module):
    """The teacher head and the handover: (student logits, teacher logits) -> the policy's logits.

    `teacher` maps the teacher's inputs to logits [..., A]; `handover` (a scalar buffer) is w above.
    `imitation_loss` is the masked mean of KL(teacher || student) over the steps, per action component
    summed. With `hold_teacher` the teacher's logits enter a mixture (0 < w < 1) with their gradient
    stopped, so that only the student learns from the policy gradient while both act.
    """

    def __init__(self, teacher: nn.Module, action_sizes: ActionSizes, hold_teacher: bool = False) -> None:
        super().__init__()
        self.teacher = teacher
        self.action_sizes = action_sizes
        # Whether the teacher's logits enter a mixture (0 < w < 1) with their gradient stopped.
        self.hold_teacher = hold_teacher
        self.register_buffer("handover", torch.zeros(()))

    @run_in_float32
    def forward(self, student_logits: Tensor, teacher_logits: Tensor) -> Tensor:
        weight = float(self.handover)
        if weight <= 0.0:
            return teacher_logits.float()
        if weight >= 1.0:
            return student_logits.float()
        if self.hold_teacher:
            teacher_logits = teacher_logits.detach()
        return distributions.mixture(
            teacher_logits.float(), student_logits.float(), weight, self.action_sizes
        )

    @run_in_float32
    def imitation_loss(self, student_logits: Tensor, teacher_logits: Tensor, mask: Tensor) -> Tensor:
        """Masked mean over [T, B] of KL(softmax(teacher) || softmax(student)), the teacher held fixed."""
        divergence = distributions.kl_divergence(
            teacher_logits.detach().float(), student_logits.float(), self.action_sizes
        )
        return masked_mean(divergence, mask)
