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

Handed over by episodes instead (`by_episode`), the policy is one head's for a whole episode: the
student's where the episode's draw u (uniform in [0, 1)) is below w, the teacher's otherwise. The draw
lives in the recurrent state (`DRAW_STATE_NAMES`) and is made at each episode's start from the draw
before it and the length of the episode before it, with integer arithmetic, so that the learner's
replay of an unroll from its stored state makes the same draws as the actor did, on any device. The
training success is then (1 - w) s_teacher + w s_student, without the dip of a per-step mixture
whose two halves press at different steps; and the policy gradient of each episode reaches the head
that played it alone.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from nalu_rl.agents import distributions
from nalu_rl.agents.distributions import ActionSizes
from nalu_rl.agents.losses import masked_mean
from nalu_rl.units import run_in_float32

# The state of a handover by episodes, each [B, 1] float32 holding an integer below 2 ** 24 (exact):
# the episode's draw (u = draw / 2 ** 24) and the number of steps since the episode started.
DRAW_STATE_NAMES = ("handover_draw", "handover_episode_steps")
_DRAW_MODULUS = 2**24
# A linear congruential step modulo 2 ** 24 (full period: the multiplier is 1 mod 4, the increment odd).
_DRAW_MULTIPLIER = 1_664_525
_DRAW_INCREMENT = 1_013_904_223


def next_draws(draw: Tensor, episode_steps: Tensor, episode_start: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """One step of the draws of B episodes: (draw [B, 1], steps [B, 1], episode_start [B]) -> (draw,
    steps, u [B]) after it. Where an episode starts, its draw follows from the one before and that
    episode's length (so that envs whose episodes differ in length draw apart); u is the draw in [0, 1)."""
    start = episode_start.reshape(-1, 1).bool()
    previous = draw.long() + episode_steps.long()
    drawn = (previous * _DRAW_MULTIPLIER + _DRAW_INCREMENT) % _DRAW_MODULUS
    draw = torch.where(start, drawn, draw.long())
    steps = torch.where(start, torch.zeros_like(draw), episode_steps.long() + 1)
    return draw.float(), steps.float(), draw.squeeze(-1).double() / _DRAW_MODULUS


class CountStudent(nn.Module):
    """The teacher head and the handover: (student logits, teacher logits) -> the policy's logits.

    `teacher` maps the teacher's inputs to logits [..., A]; `handover` (a scalar buffer) is w above.
    `imitation_loss` is the masked mean of KL(teacher || student) over the steps, per action component
    summed. With `hold_teacher` the teacher's logits enter a mixture (0 < w < 1) with their gradient
    stopped, so that only the student learns from the policy gradient while both act. With
    `by_episode` each episode is one head's (`episode_heads`), and the state holds the draws.
    """

    def __init__(
        self,
        teacher: nn.Module,
        action_sizes: ActionSizes,
        hold_teacher: bool = False,
        by_episode: bool = False,
    ) -> None:
        super().__init__()
        self.teacher = teacher
        self.action_sizes = action_sizes
        # Whether the teacher's logits enter a mixture (0 < w < 1) with their gradient stopped.
        self.hold_teacher = hold_teacher
        # Whether each episode is played by one head, drawn at its start (else a per-step mixture).
        self.by_episode = by_episode
        self.register_buffer("handover", torch.zeros(()))
        # The student's and the teacher's logits of the last forward pass run with gradients.
        self._imitated: tuple[Tensor, Tensor] | None = None
        self._head_entropies: dict[str, float] = {}

    @property
    def state_names(self) -> tuple[str, ...]:
        """The names of the student's part of the recurrent state: the draws when by episode, else none."""
        return DRAW_STATE_NAMES if self.by_episode else ()

    def initial_state(self, batch_size: int, device: torch.device | str) -> tuple[Tensor, ...]:
        """Zero draws and step counts [B, 1] for `batch_size` episodes (none unless by episode)."""
        return tuple(torch.zeros(batch_size, 1, device=device) for _ in self.state_names)

    def episode_heads(
        self, episode_start: Tensor, state: tuple[Tensor, ...]
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """Which head plays each step of B episodes: episode_start [T, B] and the draws' state ->
        (True where the student plays [T, B], the state after the last step)."""
        draw, steps = state
        student = []
        weight = float(self.handover)
        for start in episode_start.unbind(0):
            draw, steps, uniform = next_draws(draw, steps, start)
            student.append(uniform < weight)
        return torch.stack(student), (draw, steps)

    @run_in_float32
    def forward(
        self, student_logits: Tensor, teacher_logits: Tensor, student_plays: Tensor | None = None
    ) -> Tensor:
        """The policy's logits [T, B, A]; `student_plays` [T, B] (by episode) says which head plays."""
        if student_plays is not None:
            return torch.where(student_plays.unsqueeze(-1), student_logits.float(), teacher_logits.float())
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

    def play(
        self, student_logits: Tensor, teacher_input: Tensor, episode_start: Tensor, state: tuple[Tensor, ...]
    ) -> tuple[Tensor, Tensor | None, tuple[Tensor, ...]]:
        """The policy's logits [T, B, A] from the student's logits and the teacher's input, which head
        plays each step ([T, B], None unless by episode) and the draws' state after the last step;
        kept for `imitation` when run with gradients."""
        teacher_logits = self.teacher(teacher_input)
        self._imitated = (student_logits, teacher_logits) if torch.is_grad_enabled() else None
        plays = None
        if state:
            plays, state = self.episode_heads(episode_start, state)
        return self(student_logits, teacher_logits, plays), plays, state

    def imitation(self, mask: Tensor, weight: float) -> Tensor:
        """`weight` times the imitation loss of the last `play` run with gradients, over its first steps
        that `mask` [T, B] covers (a zero scalar when there is none); records each head's mean entropy
        there (`head_entropies`)."""
        if self._imitated is None:
            return mask.new_zeros((), dtype=torch.float32)
        student_logits, teacher_logits = (logits[: mask.shape[0]] for logits in self._imitated)
        self._imitated = None
        with torch.no_grad():
            entropies = [
                masked_mean(distributions.entropy(logits.float(), self.action_sizes), mask)
                for logits in (student_logits, teacher_logits)
            ]
        student, teacher = torch.stack(entropies).tolist()
        self._head_entropies = {"loss/entropy_student": student, "loss/entropy_teacher": teacher}
        return weight * self.imitation_loss(student_logits, teacher_logits, mask)

    def head_entropies(self) -> dict[str, float]:
        """The mean entropy of each head's policy over the steps of the last `imitation`, whichever
        head played them ("loss/entropy_student", "loss/entropy_teacher"): which one sharpens or
        collapses first."""
        return dict(self._head_entropies)

    @run_in_float32
    def imitation_loss(self, student_logits: Tensor, teacher_logits: Tensor, mask: Tensor) -> Tensor:
        """Masked mean over [T, B] of KL(softmax(teacher) || softmax(student)), the teacher held fixed."""
        divergence = distributions.kl_divergence(
            teacher_logits.detach().float(), student_logits.float(), self.action_sizes
        )
        return masked_mean(divergence, mask)
