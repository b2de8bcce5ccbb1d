"""`Wiring`: how an agent is assembled from named parts, and which signals each part reads.

An agent is an encoder, up to two recurrent cores and two heads. The cores sit in two slots:
  the memory slot   (signal "memory"): a core named by `memory_core` ("lstm" by default, "gru" or
                    any registered core); it reads `memory_inputs` and has `memory_size` units.
  the counter slot  (signal "count"): a core named by `counter` ("accumulator", "recurrent",
                    "linear-recurrence" or any registered core); it reads `counter_inputs` and has
                    `counter_size` units, built on the arithmetic `unit` where the core uses one.
The signals the parts read: "encoder" (the encoded observation), "stimulus" (the observation's
"stimulus" entry, raw; empty where there is none), "bias" (a constant 1), "memory" and "count".
Cores, encoders and agents are registered by name (`nalu_rl.agents.registry`). Wirings stored
before the memory slot had its own name (fields `lstm_inputs`, `lstm_size`, signal "lstm") load
through `Wiring.from_dict`, which renames them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

MEMORY_SIGNAL = "memory"
COUNT_SIGNAL = "count"
MEMORY_INPUTS = ("encoder", "stimulus", COUNT_SIGNAL)
COUNTER_INPUTS = ("encoder", "stimulus", "bias", MEMORY_SIGNAL)
HEAD_INPUTS = ("encoder", "stimulus", MEMORY_SIGNAL, COUNT_SIGNAL)


@dataclass(frozen=True)
class Wiring:
    """How an agent is assembled: its parts by registered name, and what each core and head reads.

    encoder: a registered encoder, or "auto": the conv net for uint8 images (H, W, C) of 20x20 or
        more, the embedding for other integer codes (MiniGrid's view), the MLP else.
    memory_core: the registered core of the memory slot (used when memory_inputs is not empty).
    memory_inputs: the memory core's inputs among "encoder", "stimulus", "count"; empty: no memory core.
    counter: None (no counter) or the registered core of the counter slot.
    counter_inputs: the counter's inputs among "encoder", "stimulus", "bias", "memory".
    actor_inputs / critic_inputs: each head's inputs among "encoder", "stimulus", "memory", "count".
    actor_hidden / critic_hidden: 0 for a linear head, else the width of one hidden ReLU layer.
    unit: the arithmetic unit of a counter built on one ("nac", "nalu", "nau", "nmu", "signed-nau",
        "snap-nau", or any registered one).
    counter_size, memory_size, feature_size: widths of the counter state, the memory core and the
        encoder's output (per observation entry).
    feature_norm: layer-normalise the encoder features before anything reads them.
    actor_count_clip: 0 (off) or c > 0: the actor reads the count clamped to [-c, c] (the critic and
        the counter's own recurrence read it unclamped), so a count beyond c looks the same to the
        policy however large it grows.
    count_as_action: the actor's logit of each action j also gets -s * |c - j|, c the first entry of
        the count (as the actor reads it) and s in (0, 5) learned (`nalu_rl.agents.count_action`): a count
        reads as the action of that index, whether or not training has seen that count.
    count_mixture: the policy is a mixture over the actor head's own and, for each entry n_k of the
        count, the policy that answers n_k (-s * |n_k - j|), weighted by a softmax over a linear
        query of the actor's inputs other than the count (`nalu_rl.agents.count_mixture`): the
        observation chooses which count answers.
    critic_detached: the critic reads its inputs with their gradient stopped, so the value loss trains
        the critic's head alone and never moves the encoder or a core the actor also reads.
    critic_separate: the critic has an encoder and a memory core of its own, of the actor's kinds
        and sizes (the core reads the memory core's inputs from the observation), and its head reads
        `critic_inputs` among them: the value loss shapes the critic's own features and never the
        actor's (`nalu_rl.agents.separate_critic`).
    critic_own_memory: with `critic_separate`, whether the critic's memory core is its own (True) or
        the actor's, read with its gradient stopped (False: one memory core to step, not two).
    teacher_inputs: empty (off), or the inputs of a second policy head, the teacher: the actor head
        learns to imitate it at every step, and the policy hands over from the teacher to the actor
        head (`nalu_rl.agents.count_student`).
    teacher_hidden: 0 for a linear teacher head (as `lstm`'s actor), else the width of its hidden layer.
    teacher_handover: with a teacher, whether the handover follows the units' regulariser's ramp in
        training (0 until the ramp starts, 1 from its end: with --regularizer-gate-success, counted from
        the step the training success reached the gate); off: it stays where it is (0: the teacher acts).
    teacher_held: with `teacher_handover`, whether the teacher's logits enter the policy with their
        gradient stopped while both heads act (0 < handover < 1): the presses that the student's share
        spoils then do not unteach the teacher, which acts again if the handover goes back.
    teacher_by_episode: with `teacher_handover`, whether the policy hands over by episodes: each
        episode is played by the student with probability w (the handover), by the teacher otherwise,
        instead of a per-step mixture of the two (`nalu_rl.agents.count_student`).
    critic_reads_head: with `teacher_by_episode`, whether the critic also reads which head plays the
        episode (1: the student): the value of an episode is that of the policy playing it.
    """

    memory_inputs: tuple[str, ...] = ()
    counter: str | None = None
    counter_inputs: tuple[str, ...] = ()
    actor_inputs: tuple[str, ...] = ()
    critic_inputs: tuple[str, ...] = ()
    actor_hidden: int = 0
    critic_hidden: int = 0
    unit: str = "nac"
    counter_size: int = 8
    memory_size: int = 128
    feature_size: int = 256
    feature_norm: bool = False
    actor_count_clip: float = 0.0
    count_as_action: bool = False
    count_mixture: bool = False
    critic_detached: bool = False
    critic_separate: bool = False
    memory_core: str = "lstm"
    encoder: str = "auto"
    teacher_inputs: tuple[str, ...] = ()
    teacher_hidden: int = 0
    teacher_handover: bool = False
    teacher_held: bool = False
    teacher_by_episode: bool = False
    critic_reads_head: bool = False
    critic_own_memory: bool = True

    @property
    def has_memory(self) -> bool:
        """Whether the memory slot holds a core."""
        return bool(self.memory_inputs)

    @property
    def policy_reads_memory(self) -> bool:
        """Whether the policy (actor head or teacher) reads the memory core, directly or through the count."""
        heads = (*self.actor_inputs, *self.teacher_inputs)
        through_count = COUNT_SIGNAL in heads and MEMORY_SIGNAL in self.counter_inputs
        return MEMORY_SIGNAL in heads or through_count

    @property
    def takes_separate_critic(self) -> bool:
        """Whether `critic_separate` can copy the memory slot for the critic: the policy reads a memory
        core (which the copy then leaves to it alone), and the critic reads no count and is not detached."""
        return (
            self.policy_reads_memory and COUNT_SIGNAL not in self.critic_inputs and not self.critic_detached
        )

    def validate(self) -> None:
        """Raise ValueError if the wiring names an unknown input or cannot be computed step by step.

        Whether its named parts are registered is checked when a model is built from it.
        """
        groups = {
            "memory_inputs": (self.memory_inputs, MEMORY_INPUTS),
            "counter_inputs": (self.counter_inputs, COUNTER_INPUTS),
            "actor_inputs": (self.actor_inputs, HEAD_INPUTS),
            "critic_inputs": (self.critic_inputs, HEAD_INPUTS),
            "teacher_inputs": (self.teacher_inputs, HEAD_INPUTS),
        }
        for field_name, (names, allowed) in groups.items():
            unknown = [name for name in names if name not in allowed]
            if unknown or len(set(names)) != len(names):
                raise ValueError(f"{field_name} must be distinct names among {allowed}, got {names}")
        for name in ("counter", "memory_core", "encoder"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, str) and value):
                raise ValueError(f"{name} must be a registered name, got {value!r}")
        if (self.counter is None) == bool(self.counter_inputs):
            raise ValueError("counter_inputs must be given exactly when there is a counter")
        if not self.actor_inputs or not self.critic_inputs:
            raise ValueError("actor_inputs and critic_inputs must not be empty")
        uses = {*self.memory_inputs, *self.actor_inputs, *self.critic_inputs, *self.teacher_inputs}
        if COUNT_SIGNAL in uses and self.counter is None:
            raise ValueError("'count' is read but the wiring has no counter")
        uses |= set(self.counter_inputs)
        if MEMORY_SIGNAL in uses and not self.has_memory:
            raise ValueError("'memory' is read but the wiring has no memory core")
        if COUNT_SIGNAL in self.memory_inputs and MEMORY_SIGNAL in self.counter_inputs:
            raise ValueError("the memory core and the counter cannot read each other at the same step")
        for name in ("actor_hidden", "critic_hidden", "teacher_hidden"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.actor_count_clip >= 0:  # also rejects NaN
            raise ValueError(f"actor_count_clip must be >= 0, got {self.actor_count_clip}")
        if self.actor_count_clip and COUNT_SIGNAL not in self.actor_inputs:
            raise ValueError("actor_count_clip is set but the actor does not read 'count'")
        if self.count_as_action and self.counter is None:
            raise ValueError("count_as_action reads the count as an action, but the wiring has no counter")
        if self.count_mixture and self.count_as_action:
            raise ValueError("count_mixture and count_as_action are two readings of the count: choose one")
        if self.count_mixture and (self.counter is None or not set(self.actor_inputs) - {COUNT_SIGNAL}):
            raise ValueError("count_mixture needs a counter and an actor input besides 'count' to query it")
        if self.teacher_handover and not self.teacher_inputs:
            raise ValueError("teacher_handover hands the policy over from a teacher: set teacher_inputs")
        if self.teacher_held and not self.teacher_handover:
            raise ValueError("teacher_held holds the teacher while it hands over: set teacher_handover")
        if self.teacher_by_episode and not self.teacher_handover:
            raise ValueError("teacher_by_episode hands over by episodes: set teacher_handover")
        if self.critic_reads_head and not self.teacher_by_episode:
            raise ValueError("critic_reads_head reads who plays an episode: it needs teacher_by_episode")
        if self.teacher_by_episode and self.teacher_held:
            raise ValueError(
                "teacher_by_episode plays each episode by one head: teacher_held has no mixture to hold"
            )
        if self.teacher_inputs and (self.count_mixture or self.count_as_action):
            raise ValueError("teacher_inputs teaches the actor head: not with a count read as an action")
        if self.critic_separate and not self.takes_separate_critic:
            raise ValueError(
                "critic_separate copies the memory core for the critic: it needs a memory core the policy"
                " reads, a critic that does not read 'count', and critic_detached off"
            )
        for name in ("counter_size", "memory_size", "feature_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain values (lists for tuples), storable in a weights-only checkpoint."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Wiring:
        """The validated Wiring of `to_dict` output; raises ValueError on unknown or invalid fields.

        Fields added since a checkpoint was written take their defaults; the memory slot's old names
        (`lstm_inputs`, `lstm_size`, the signal "lstm") and the event counter's (the core
        "event-count") are read as today's.
        """
        values = _renamed_legacy_names(values)
        unknown = sorted(set(values) - set(WIRING_OPTIONS))
        if unknown:
            raise ValueError(f"unknown wiring fields {unknown}")
        wiring = cls(**{name: _frozen(value) for name, value in values.items()})
        wiring.validate()
        return wiring


# The memory slot's first names, after the paper's LSTM that filled it first; stored wirings may hold them.
LEGACY_FIELD_NAMES = {"lstm_inputs": "memory_inputs", "lstm_size": "memory_size"}
LEGACY_SIGNAL_NAMES = {"lstm": MEMORY_SIGNAL}
SIGNAL_LIST_FIELDS = ("memory_inputs", "counter_inputs", "actor_inputs", "critic_inputs", "teacher_inputs")
# The event counter's first registered name; the shipped learned-count checkpoints record it.
LEGACY_CORE_NAMES = {"event-count": "event-counter"}


def _renamed_legacy_names(values: dict[str, Any]) -> dict[str, Any]:
    """Stored wiring fields with the memory slot's old field and signal names, and the cores' old
    names, replaced by today's."""
    renamed = {LEGACY_FIELD_NAMES.get(name, name): value for name, value in values.items()}
    if len(renamed) != len(values):
        raise ValueError(f"a wiring gives both an old and a new name of one field: {sorted(values)}")
    for name in SIGNAL_LIST_FIELDS:
        if isinstance(renamed.get(name), (list, tuple)):
            renamed[name] = [LEGACY_SIGNAL_NAMES.get(signal, signal) for signal in renamed[name]]
    for name in ("memory_core", "counter"):
        if isinstance(renamed.get(name), str):
            renamed[name] = LEGACY_CORE_NAMES.get(renamed[name], renamed[name])
    return renamed


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


WIRING_OPTIONS = tuple(field.name for field in fields(Wiring))
