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
- count-student-toggle-direct: count-student-toggle whose events start as copies of the phase bits
  (event gates reading the phase alone: weight 2, bias -1), so that the count reads the phase from
  the start and the imitation loss reaches the toggles' gates through it at every step.
- count-student-toggle-identity: count-student-toggle-direct whose toggles pass the gradient through
  unchanged (not the sigmoid's, which vanished at the pre-activations of -5 to -8 the gates had
  reached) and stay out of the gates' margin regulariser.
- count-student-toggle-free: count-student-toggle-identity trained without the units' regulariser
  (`--regularizer-weight 0`): its gate opens at a training success of 0.25, the teacher's, and
  pulled the count's weights, still small, to 0 before the student could use them.
- count-student-phase-count: count-student-toggle-free whose events are the phase bits themselves
  (no event gates between them and the count): the count is m_t = m_{t-1} + snap(U([p_t, 1 - p_t])).
- count-student-change: count-student-phase-count whose toggles read the change of the observation,
  c_t = step(W_p (x_t - x_{t-1}) + b_p), x_{t-1} kept in the state: a stretch of equal frames cannot
  toggle, whatever the weights.
- count-student-change-late: count-student-change with the units' regulariser entering once the
  training success has reached 0.9 (from 0.5M to 1.5M steps after it), over 4M steps: it pulls the
  count's weights to -1, 0 or +1 and its increments onto the grid only once the student has found them.
- count-student-apart-critic: count-student-change-late whose critic reads the LSTM alone (as
  `lstm`'s), not the count: the teacher's side is then `lstm` itself, and nothing the student learns
  (the count's weights moving under the regulariser) reaches the value loss or the LSTM.
- count-student-handover: count-student-apart-critic whose policy hands over from the teacher to the
  student as the regulariser ramps in (`Wiring.teacher_handover`), over 5M steps: once the count is
  snapped, the student acts and the policy gradient trains it on its own presses. (Its first two
  runs, before the imitation faded with the handover, are in the journal.)
- count-student-return: count-student-handover whose regulariser's gate, and with it the handover,
  closes again when the training success falls below 0.5 (`--regularizer-gate-fall`): the teacher acts
  and the student imitates again until the success is back at 0.9. The entropy bonus falls to 0 over
  its 6M steps, so that the student's press sharpens once it acts.
- count-student-held: count-student-return whose teacher's logits enter the policy with their gradient
  stopped while both heads act (`Wiring.teacher_held`): in count-student-return's first run the
  failures of the student's share untaught the teacher too, and the whole policy collapsed.
- count-student-snapped: count-student-held whose handover ramps over 1M steps from the step at which
  the regulariser reaches its full weight (`--handover-steps`), not with it: the student acts once its
  count has been pulled onto the grid. 8M steps.
- count-student-apart-snapped: count-student-snapped whose counter reads the encoder's features with
  their gradient stopped (the toggles' identity gradient had carried the student's losses into the
  encoder the teacher's LSTM reads), and whose entropy bonus stays at its start (falling to 0, it left
  a teacher that dipped unable to recover).
- count-student-grid: count-student-apart-snapped without the pull of the count's weights to -1, 0
  or +1 (unit `grid-only-nau`): the event counter's pull of each step's increment onto multiples of
  1/2 remains, and an increment within 0.05 of one is used as exactly that.
- count-student-episodes: count-student-grid handing over by episodes (`Wiring.teacher_by_episode`:
  each episode is played by the student with probability w, by the teacher otherwise, so the teacher
  needs no holding), with the gate closing again below a training success of 0.6 instead of 0.5 (two
  changes: without a mixture's dip, a fall to 0.6 is a student that fails, and 0.5 is chance on a
  two-way answer).
- count-student-earned: count-student-episodes whose handover is earned (--handover-earned 0.9): the
  student plays 1/10 of the episodes from the step the regulariser reaches its full weight, and the
  handover's 1M-step ramp advances only while the student's recent success in its own episodes is at
  least 0.9 of the teacher's; 10M steps (the benchmark's budget) instead of 8M, for the practice.
- count-student-head: count-student-earned whose critic also reads which head plays the episode
  (`Wiring.critic_reads_head`): a critic that saw mostly the teacher's episodes valued the student's
  as the teacher's.
- count-student-slow-unit: count-student-head whose count's unit trains at the learning rate of the
  rest (--unit-lr-scale 1, not 10): students that played well fell at once, their increments off
  the grid.
- count-student-clip: count-student-head whose gradient is clipped at norm 5 (--max-grad-norm 5, not
  40): the falls of students and teachers came with gradient norms of 38-341.
- count-student-part-clip: count-student-head whose gradient is clipped part by part at norm 1
  (--grad-clip-by-part --max-grad-norm 1): the count's gradient (median 13) set the global clip of
  every part's step.
- count-student-short-toggle: count-student-head whose phase recurrence passes no gradient back to
  earlier steps (core "event-counter-change-short", `count_student_cores.py`).
- count-student-steady: count-student-part-clip whose regulariser's gate stays open once open (no
  --regularizer-gate-fall): dips of the teacher's success closed the gate and restarted a student's
  practice that was near the teacher's.
- count-student-firm-grid: count-student-steady with the regulariser's weight at 1, not 0.1: its
  failing students' increments stalled just off the grid of 1/2 (+0.553 and -0.482; +0.63 and -0.60),
  where the snap (within 0.05) does not use them as exact.
- count-student-whole-steps: count-student-steady whose increments are each rounded to -1, 0 or +1
  (core "change-counter-whole-steps"): its failing students counted up and down by different amounts
  (+0.553 and -0.482; +0.63 and -0.60; +0.5 and -1 on the firmer grid).
- count-student-whole-steps-eps: count-student-whole-steps with Adam's epsilon at 1e-4, not 1e-8
  (--adam-eps): a teacher at a success of about 1 has an LSTM gradient norm of 0.001-0.003, which
  Adam with epsilon 1e-8 scales up to steps the size of the learning rate, so that its LSTM keeps
  moving while its head, near-deterministic, barely learns; with 1e-4 such steps shrink with the
  gradient. Teachers fell (by over 0.3 from above 0.9), briefly or for good, in 13 of the 16
  ReadySetGo runs of part-clip, steady, firm-grid and whole-steps.
- count-student-detached-critic: count-student-whole-steps whose critic reads the LSTM with its
  gradient stopped, so that only the teacher's policy gradient moves the LSTM the teacher acts on
  (the value loss cannot pull the teacher's features away under its near-deterministic head).
- count-student-own-critic: count-student-whole-steps whose critic has an encoder and an LSTM of its
  own (reading which head plays, as before): the value loss still shapes features, but the critic's.
- count-student-carry-fallback: count-student-whole-steps whose phase bits count the cues in binary
  (core "change-counter-carry", `count_student_cores.py`: on IntervalDiscrimination the phase after the
  third flash was the first interval's again), whose critic reads the LSTM with its gradient stopped
  (as count-student-detached-critic) and whose handover goes back while the student falls behind
  (--handover-retreat): with the critic detached the teacher's LSTM is left as it was once the
  student plays every episode, a teacher to hand back to, and count-student-detached-critic's students
  fell to 0 after the full handover, where the imitation's weight is 0.
- count-student-carry-retreat: count-student-carry-fallback whose critic shares the LSTM, as in
  count-student-whole-steps: carry-fallback's LSTM teachers on IntervalDiscrimination, trained
  by their policy gradient alone, learned the task late or not at all.
"""

from __future__ import annotations

from dataclasses import replace

import count_student_cores  # noqa: F401  (registers the variants' counters)

from nalu_rl.agents.catalog import LEARNED_COUNT, LEARNED_COUNT_TRAINING
from nalu_rl.agents.registry import register_agent

# learned-count's training options with the entropy bonus kept at its start (not falling to 0).
_OPEN_TRAINING = {**LEARNED_COUNT_TRAINING, "entropy_coef_final": None}

COUNT_STUDENT = replace(LEARNED_COUNT, teacher_inputs=("memory",), teacher_hidden=128)
_READS_MEMORY = ("encoder", "stimulus", "memory")
# The variants with a linear teacher and a counter that reads the observation alone.
_LINEAR = replace(COUNT_STUDENT, teacher_hidden=0)
_NO_REGULARIZER = {**_OPEN_TRAINING, "regularizer_weight": 0.0}

_VARIANTS = (
    (
        "count-student",
        COUNT_STUDENT,
        "learned-count whose actor head imitates a teacher head on the LSTM; the teacher acts.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-memory",
        replace(COUNT_STUDENT, counter_inputs=_READS_MEMORY),
        "count-student whose event and phase gates also read the LSTM's h_t.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-memory-detached",
        replace(COUNT_STUDENT, counter="event-counter-detached-memory", counter_inputs=_READS_MEMORY),
        "count-student whose event and phase gates read the LSTM's h_t with its gradient stopped.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-linear",
        replace(_LINEAR, counter="event-counter-detached-memory", counter_inputs=_READS_MEMORY),
        "count-student-memory-detached with a linear teacher head.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-apart",
        replace(_LINEAR, counter="event-counter-detached", counter_inputs=_READS_MEMORY),
        "count-student-linear whose counter reads every input with its gradient stopped.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-toggle",
        replace(_LINEAR, counter="event-counter-toggle"),
        "count-student-linear whose counter reads the observation alone, with toggling phase bits.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-toggle-direct",
        replace(_LINEAR, counter="event-counter-toggle-direct"),
        "count-student-toggle whose events start as copies of the phase bits.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-toggle-identity",
        replace(_LINEAR, counter="event-counter-toggle-identity"),
        "count-student-toggle-direct whose toggles pass the gradient through unchanged.",
        _OPEN_TRAINING,
    ),
    (
        "count-student-toggle-free",
        replace(_LINEAR, counter="event-counter-toggle-identity"),
        "count-student-toggle-identity without the units' regulariser.",
        _NO_REGULARIZER,
    ),
    (
        "count-student-phase-count",
        replace(_LINEAR, counter="event-counter-phase-count"),
        "count-student-toggle-free whose count adds the phase bits themselves.",
        _NO_REGULARIZER,
    ),
    (
        "count-student-change",
        replace(_LINEAR, counter="event-counter-change"),
        "count-student-phase-count whose toggles read the change of the observation.",
        _NO_REGULARIZER,
    ),
    (
        "count-student-change-late",
        replace(_LINEAR, counter="event-counter-change"),
        "count-student-change whose regulariser enters after the training success reaches 0.9.",
        {
            **_OPEN_TRAINING,
            "regularizer_gate_success": 0.9,
            "regularizer_start_steps": 500_000,
            "regularizer_end_steps": 1_500_000,
            "total_steps": 4_000_000,
        },
    ),
)
_LATE_REGULARIZER = _VARIANTS[-1][3]
# Each variant below changes one thing (or two, where said) of the one before it.
_APART_CRITIC = replace(_LINEAR, counter="event-counter-change", critic_inputs=("memory",))
_HANDOVER = replace(_APART_CRITIC, teacher_handover=True)
_HANDOVER_TRAINING = {**_LATE_REGULARIZER, "total_steps": 5_000_000}
_RETURN_TRAINING = {
    **_HANDOVER_TRAINING,
    "regularizer_gate_fall": 0.5,
    "entropy_coef_final": 0.0,
    "total_steps": 6_000_000,
}
_HELD = replace(_HANDOVER, teacher_held=True)
_SNAPPED_TRAINING = {**_RETURN_TRAINING, "handover_steps": 1_000_000, "total_steps": 8_000_000}
_APART_SNAPPED = replace(_HELD, counter="event-counter-change-detached")
_APART_SNAPPED_TRAINING = {**_SNAPPED_TRAINING, "entropy_coef_final": None}
_VARIANTS += (
    (
        "count-student-apart-critic",
        _APART_CRITIC,
        "count-student-change-late whose critic reads the LSTM alone, not the count.",
        _LATE_REGULARIZER,
    ),
    (
        "count-student-handover",
        _HANDOVER,
        "count-student-apart-critic handing the policy over to the student as the regulariser ramps in.",
        _HANDOVER_TRAINING,
    ),
    (
        "count-student-return",
        _HANDOVER,
        "count-student-handover whose handover goes back when the training success falls below 0.5, "
        "with an entropy bonus that falls to 0 over 6M steps.",
        _RETURN_TRAINING,
    ),
    (
        "count-student-held",
        _HELD,
        "count-student-return whose teacher gets no policy gradient while both heads act.",
        _RETURN_TRAINING,
    ),
    (
        "count-student-snapped",
        _HELD,
        "count-student-held whose handover starts once the regulariser has its full weight, over 1M "
        "steps, in 8M steps.",
        _SNAPPED_TRAINING,
    ),
    (
        "count-student-apart-snapped",
        _APART_SNAPPED,
        "count-student-snapped whose counter reads the encoder with its gradient stopped, with the "
        "entropy bonus kept at its start.",
        _APART_SNAPPED_TRAINING,
    ),
    (
        "count-student-grid",
        replace(_APART_SNAPPED, unit="grid-only-nau"),
        "count-student-apart-snapped whose count's weights are not pulled to -1, 0 or +1; only what "
        "each step adds is pulled onto multiples of 1/2.",
        _APART_SNAPPED_TRAINING,
    ),
    (
        "count-student-episodes",
        replace(_APART_SNAPPED, unit="grid-only-nau", teacher_held=False, teacher_by_episode=True),
        "count-student-grid handing over by episodes, its gate closing again below a success of 0.6.",
        {**_APART_SNAPPED_TRAINING, "regularizer_gate_fall": 0.6},
    ),
    (
        "count-student-earned",
        replace(_APART_SNAPPED, unit="grid-only-nau", teacher_held=False, teacher_by_episode=True),
        "count-student-episodes whose handover advances only while the student keeps up, in 10M steps.",
        {
            **_APART_SNAPPED_TRAINING,
            "regularizer_gate_fall": 0.6,
            "handover_earned": 0.9,
            "total_steps": 10_000_000,
        },
    ),
)
_EARNED = _VARIANTS[-1]
_VARIANTS += (
    (
        "count-student-head",
        replace(_EARNED[1], critic_reads_head=True),
        "count-student-earned whose critic reads which head plays the episode.",
        _EARNED[3],
    ),
    (
        "count-student-slow-unit",
        replace(_EARNED[1], critic_reads_head=True),
        "count-student-head whose count's unit trains at the learning rate of the rest.",
        {**_EARNED[3], "unit_lr_scale": 1.0},
    ),
    (
        "count-student-clip",
        replace(_EARNED[1], critic_reads_head=True),
        "count-student-head whose gradient is clipped at norm 5.",
        {**_EARNED[3], "max_grad_norm": 5.0},
    ),
    (
        "count-student-part-clip",
        replace(_EARNED[1], critic_reads_head=True),
        "count-student-head whose gradient is clipped part by part at norm 1.",
        {**_EARNED[3], "max_grad_norm": 1.0, "grad_clip_by_part": True},
    ),
    (
        "count-student-short-toggle",
        replace(_EARNED[1], critic_reads_head=True, counter="event-counter-change-short"),
        "count-student-head whose phase recurrence passes no gradient to earlier steps.",
        _EARNED[3],
    ),
    (
        "count-student-steady",
        replace(_EARNED[1], critic_reads_head=True),
        "count-student-part-clip whose regulariser's gate, once open, stays open.",
        {**_EARNED[3], "max_grad_norm": 1.0, "grad_clip_by_part": True, "regularizer_gate_fall": 0.0},
    ),
)
_STEADY = _VARIANTS[-1]
_VARIANTS += (
    (
        "count-student-firm-grid",
        _STEADY[1],
        "count-student-steady whose increments are pulled onto the grid 10 times as hard.",
        {**_STEADY[3], "regularizer_weight": 1.0},
    ),
)
_WHOLE_STEPS = replace(_STEADY[1], counter="change-counter-whole-steps")
_VARIANTS += (
    (
        "count-student-whole-steps",
        _WHOLE_STEPS,
        "count-student-steady whose increments are each rounded to -1, 0 or +1.",
        _STEADY[3],
    ),
    (
        "count-student-whole-steps-eps",
        _WHOLE_STEPS,
        "count-student-whole-steps with Adam's epsilon at 1e-4.",
        {**_STEADY[3], "adam_eps": 1e-4},
    ),
    (
        "count-student-detached-critic",
        replace(_WHOLE_STEPS, critic_detached=True),
        "count-student-whole-steps whose critic reads the LSTM with its gradient stopped.",
        _STEADY[3],
    ),
    (
        "count-student-own-critic",
        replace(_WHOLE_STEPS, critic_separate=True),
        "count-student-whole-steps whose critic has an encoder and an LSTM of its own.",
        _STEADY[3],
    ),
    (
        "count-student-carry-fallback",
        replace(_WHOLE_STEPS, counter="change-counter-carry", critic_detached=True),
        "count-student-whole-steps whose phase bits count the cues in binary, with a detached critic "
        "and a handover that goes back.",
        {**_STEADY[3], "handover_retreat": True},
    ),
    (
        "count-student-carry-retreat",
        replace(_WHOLE_STEPS, counter="change-counter-carry"),
        "count-student-carry-fallback whose critic shares the LSTM.",
        {**_STEADY[3], "handover_retreat": True},
    ),
)
for _name, _wiring, _summary, _training in _VARIANTS:
    register_agent(_name, _wiring, _summary, training_defaults=_training)
