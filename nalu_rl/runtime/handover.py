"""The earned handover (--handover-earned r): a teacher hands the policy over to its student only as
fast as the student keeps up.

With a teacher that hands over by episodes (`Wiring.teacher_by_episode`), each episode is played by
one head, so the run can tell the student's success from the teacher's. Once the units' regulariser
has its full weight, the student plays TRIAL_SHARE of the episodes; the handover's ramp
(--handover-steps N: from that share to 1 over N steps) then advances only through the batches in
which the student's recent success, over its last HEAD_WINDOW episodes, is at least r times the
best the teacher's over theirs has been since the run started (or the handover last started again,
below), so that a dip of the teacher's does not lower the bar (a teacher at 0.37 for a moment once
let a student at 0.47 pass; a teacher that fell to 0 between the gate's opening and the handover's
start once let a student at 0 take every episode). A student that does not keep up goes on practising
on its share of the episodes (its own policy gradient, and the imitation) while the teacher plays the
rest, instead of being handed a policy it cannot yet play.
Where the regulariser's gate closes (--regularizer-gate-fall), the handover starts again from nothing.
With --handover-retreat the ramp's clock also goes back through the batches in which the student does
not keep up (never below the trial share): a student that falls after it was handed the policy (with
no teacher playing, the imitation's weight 1 - w is 0, and nothing pulls it back) hands episodes back
to its teacher, whose imitation then returns with them.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import torch

from nalu_rl.runtime.rollout import SUCCESS_CODE, RolloutBatch

# The share of the episodes the student plays from the start of the handover, for its success to be seen.
TRIAL_SHARE = 0.1
# The recent episodes of each head over which its success is measured, and the fewest that count.
HEAD_WINDOW = 500
MIN_EPISODES = 100


class EarnedHandover:
    """The handover's value from the regulariser's steps, and its ramp's clock, advanced by the
    batches in which the student kept up (module docstring)."""

    def __init__(self, config: Any) -> None:
        self.ratio = config.handover_earned
        self.retreats = config.handover_retreat
        self.start = config.regularizer_end_steps
        self.length = config.handover_steps
        # The steps of the batches through which the student has kept up since the handover started, less
        # (with --handover-retreat) those of the batches through which it has not.
        self.clock = 0
        self.started = False
        # The best recent success of the teacher's since the run started or the handover last started
        # again (None before it has one).
        self.teacher_best: float | None = None
        self.recent = {"student": deque(maxlen=HEAD_WINDOW), "teacher": deque(maxlen=HEAD_WINDOW)}

    def value(self, regularizer_steps: int) -> float:
        """The handover after `regularizer_steps` of the regulariser's ramp (-1: its gate is closed):
        0 before the regulariser's full weight, then max(TRIAL_SHARE, clock / N), at most 1."""
        if regularizer_steps < self.start:
            if self.started:  # the gate closed: start again from nothing
                self.clock, self.started, self.teacher_best = 0, False, None
                for outcomes in self.recent.values():
                    outcomes.clear()
            return 0.0
        self.started = True
        return min(1.0, max(TRIAL_SHARE, self.clock / self.length))

    def record(self, steps: int, student_successes: np.ndarray, teacher_successes: np.ndarray) -> None:
        """Add the outcomes (True: success) of the episodes each head ended in a batch of `steps`
        steps, and advance the clock by them where the student kept up."""
        self.recent["student"].extend(bool(success) for success in student_successes)
        self.recent["teacher"].extend(bool(success) for success in teacher_successes)
        teacher = self.success("teacher")
        if teacher is not None:
            self.teacher_best = teacher if self.teacher_best is None else max(self.teacher_best, teacher)
        if not self.started:
            return
        if self.student_keeps_up():
            self.clock += steps
        elif self.retreats:
            self.clock = max(0, self.clock - steps)

    def success(self, head: str) -> float | None:
        """A head's recent success ("student" or "teacher"); None before MIN_EPISODES of its episodes."""
        outcomes = self.recent[head]
        return float(np.mean(outcomes)) if len(outcomes) >= MIN_EPISODES else None

    def student_keeps_up(self) -> bool:
        """Whether the student's recent success is at least r times the teacher's best so far (a teacher
        without MIN_EPISODES recent episodes, once the student plays nearly all of
        them, counts as kept up with)."""
        student, teacher = self.success("student"), self.success("teacher")
        if student is None:
            return False
        if teacher is None:
            return True
        return student >= self.ratio * max(teacher, self.teacher_best or 0.0)

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the clock and the teacher's best (the recent outcomes are measured
        again after a resume)."""
        return {"clock": self.clock, "started": self.started, "teacher_best": self.teacher_best}

    def restore(self, state: dict[str, Any]) -> None:
        self.clock, self.started = int(state["clock"]), bool(state["started"])
        best = state.get("teacher_best")  # absent from checkpoints written before it was kept
        self.teacher_best = None if best is None else float(best)


@torch.no_grad()
def outcomes_by_head(model: torch.nn.Module, batch: RolloutBatch) -> tuple[np.ndarray, np.ndarray]:
    """The outcomes (True: success) of the episodes that ended in `batch`, those the student played
    and those the teacher played, by the draws the batch's stored state replays
    (`CountStudent.episode_heads`, at the model's handover now)."""
    length = batch.outcome.shape[0]
    draws = tuple(part.cpu() for part in batch.initial_state[-len(model.student.state_names) :])
    student_plays, _ = model.student.episode_heads(batch.episode_start[:length].cpu(), draws)
    outcome = batch.outcome.cpu()
    ended, succeeded = outcome >= 0, outcome == SUCCESS_CODE
    return (
        succeeded[ended & student_plays].numpy(),
        succeeded[ended & ~student_plays].numpy(),
    )
