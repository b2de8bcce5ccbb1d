"""The benchmark's fixed protocol and its tasks: what every trial trains on, for how long, and where
it is evaluated.

One protocol for every agent and task: each agent trains on its own training defaults, symbolic
observations where a task has pixels too, delays drawn from 5..12, for at most `budget_steps`
environment steps (it stops earlier where its defaults stop it at the training-range target); the
model it keeps (`best.pt`, its best recent training-range success, else the last checkpoint) is then
evaluated at every T of 5..12 and at the far delays 13, 20, 50, 100, 200, 500 and 1000, 200 episodes
each, with actions sampled, on evaluation seeds apart from the training seeds (`evaluation_seed`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from nalu_rl.errors import InputError

TRAINING_RANGE = (5, 12)
FAR_DELAYS = (13, 20, 50, 100, 200, 500, 1000)
HOLD_FRACTION = 0.9
"""A seed "holds" at T when its success is at least this fraction of the ceiling at T."""
HOLD_SEEDS_FRACTION = 0.8
"""The share of seeds that must hold at T for the scorecard's "holds to" (4 of 5, 3 of 3)."""
EVALUATION_SEED_OFFSET = 100_000
"""A trial trained with seed s is evaluated with seed s + this: episodes the training never drew."""

BENCHMARK_TASKS = {
    "TimeTrack": "nalu_rl/TimeTrack-v0",
    "IntervalTiming": "nalu_rl/IntervalTiming-v0",
    "ReadySetGo": "nalu_rl/ReadySetGo-v0",
    "ScaledReproduction": "nalu_rl/ScaledReproduction-v0",
    "IntervalDiscrimination": "nalu_rl/IntervalDiscrimination-v0",
    "DistractorReproduction": "nalu_rl/DistractorReproduction-v0",
    "ContinuationTapping": "nalu_rl/ContinuationTapping-v0",
}
"""The benchmark's tasks by their short names (the scorecard's columns), each a registered env id."""


@dataclass(frozen=True)
class Protocol:
    """How every trial of a benchmark run trains and is evaluated."""

    name: str
    budget_steps: int
    training_delays: tuple[int, ...]
    far_delays: tuple[int, ...]
    episodes: int

    @property
    def delays(self) -> tuple[int, ...]:
        """Every evaluated T, in order."""
        return tuple(sorted({*self.training_delays, *self.far_delays}))

    def to_dict(self) -> dict[str, Any]:
        """The protocol as JSON-ready values (recorded in bench.json and handed to the trials)."""
        values = asdict(self)
        values["training_delays"] = list(self.training_delays)
        values["far_delays"] = list(self.far_delays)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Protocol:
        """The protocol recorded by `to_dict`."""
        return cls(
            name=str(values["name"]),
            budget_steps=int(values["budget_steps"]),
            training_delays=tuple(int(delay) for delay in values["training_delays"]),
            far_delays=tuple(int(delay) for delay in values["far_delays"]),
            episodes=int(values["episodes"]),
        )


FULL_PROTOCOL = Protocol(
    name="full",
    budget_steps=10_000_000,
    training_delays=tuple(range(TRAINING_RANGE[0], TRAINING_RANGE[1] + 1)),
    far_delays=FAR_DELAYS,
    episodes=200,
)
"""The benchmark's protocol: the scorecard in docs/BENCHMARK.md is measured with it."""

QUICK_PROTOCOL = Protocol(
    name="quick",
    budget_steps=20_000,
    training_delays=(5, 12),
    far_delays=(20, 100),
    episodes=20,
)
"""A smoke run of the whole pipeline in about a minute; its numbers mean nothing."""


def evaluation_seed(training_seed: int) -> int:
    """The seed a trial trained with `training_seed` is evaluated with."""
    return training_seed + EVALUATION_SEED_OFFSET


def seeds_needed_to_hold(seeds: int) -> int:
    """How many of `seeds` seeds must hold at T for the scorecard to say the agent holds there."""
    return max(1, math.ceil(HOLD_SEEDS_FRACTION * seeds - 1e-9))


def task_label(env_id: str) -> str:
    """The scorecard's name of a task: its short name for a benchmark task, else its env id with "/"
    and ":" as "-" (a user's task)."""
    for label, task_id in BENCHMARK_TASKS.items():
        if task_id == env_id:
            return label
    return env_id.replace("/", "-").replace(":", "-")


def resolve_task(name: str) -> str:
    """The env id of a task given by its short name or by any registered env id."""
    return BENCHMARK_TASKS.get(name, name)


def check_task(env_id: str, largest_delay: int) -> None:
    """InputError in one line unless `env_id` is a registered timing task that accepts delays up to
    `largest_delay` (the interface of `nalu_rl.envs.task`, `due_time` included)."""
    from nalu_rl.environment import RunEnvironment, env_spec

    env_spec(env_id)  # an unknown id: InputError naming the registered ones
    with RunEnvironment(env_id) as environment:
        base = environment.probe.unwrapped
        missing = [
            name
            for name in ("delay_range", "max_delay", "due_time", "success_ceiling")
            if not hasattr(base, name)
        ]
        if missing:
            raise InputError(
                f"--tasks: {env_id} is not a timing task: it has no {', '.join(missing)} "
                "(the interface of nalu_rl.envs.task; docs/BENCHMARK.md, 'Adding a task')"
            )
        if not environment.is_timing_task:
            raise InputError(
                f"--tasks: {env_id} is not a timing task: its class's metadata has no 'task_options' "
                "(the interface of nalu_rl.envs.task; docs/BENCHMARK.md, 'Adding a task')"
            )
        if environment.max_delay < largest_delay:
            raise InputError(
                f"--tasks: {env_id} accepts delays up to {environment.max_delay}, and the protocol "
                f"evaluates up to T = {largest_delay}"
            )
