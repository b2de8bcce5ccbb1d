"""The timing-task interface: what a training runtime may read from a timing env, beyond Gymnasium's API.

A timing env (single or vector) provides:
- `metadata["task_options"]`: the run options it takes as keyword arguments, a tuple drawn from
  TASK_OPTIONS (TimeTrack takes all five, IntervalTiming all but "stimulus"). A generic
  Gymnasium env lacks this key.
- `metadata["delay_meaning"]` (optional): what T is in this task, in a few words, for the delay axis
  of a figure ("the steps to wait after the stimulus").
- `delay_range` (low, high) and `max_delay`: the delays T it draws and the largest T it accepts.
- `due_time(delay)`: the step t at which arrival is due at delay T (TimeTrack T, IntervalTiming 2T).
- `success_ceiling(delay)`: the best possible success rate at delay T on this env's grid.
- `reset(options={"delay": T})`: fixes T for the episode(s) that reset starts.
- `info["delay"]` (T) in every info, and `info["success"]` (bool; in a vector env a bool array
  with its `_success` mask) on the step that ends an episode.

`TimingTask` states this as a runtime-checkable Protocol; `is_timing_task(env)` checks it on
`env.unwrapped`, so wrapped envs qualify.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

TASK_OPTIONS = ("obs_mode", "size", "delay_range", "stimulus", "reward_mode")
"""The run options a timing env may take as keyword arguments; each env lists its own in metadata."""


@runtime_checkable
class TimingTask(Protocol):
    """A timing env: Gymnasium's API plus the delays it draws, its ceiling and its run options."""

    metadata: dict[str, Any]

    @property
    def delay_range(self) -> tuple[int, int]:
        """(low, high): T is drawn uniformly from low..high at reset."""
        ...

    @property
    def max_delay(self) -> int:
        """The largest T that `reset(options={"delay": T})` accepts."""
        ...

    def due_time(self, delay: int) -> int:
        """The step t at which arrival is due at delay T (the time left at t is due_time(T) - t)."""
        ...

    def success_ceiling(self, delay: int) -> float:
        """The best possible success rate at delay T under the random placement."""
        ...

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """Start an episode (every episode, for a vector env); `options={"delay": T}` fixes T."""
        ...


def is_timing_task(env: Any) -> bool:
    """Whether `env` (through `env.unwrapped`, so wrappers are seen through) is a `TimingTask`."""
    base = getattr(env, "unwrapped", env)
    metadata = getattr(base, "metadata", None)
    return isinstance(base, TimingTask) and isinstance(metadata, dict) and "task_options" in metadata


class ConfiguredDelays:
    """`delay_range` and `max_delay` of the timing-task interface, read from the env's validated
    `config`; a task's env class adds `due_time` and `success_ceiling`."""

    config: Any

    @property
    def delay_range(self) -> tuple[int, int]:
        """(low, high): T is drawn uniformly from low..high at reset."""
        return self.config.delay_range

    @property
    def max_delay(self) -> int:
        """The largest T that `reset(options={"delay": T})` accepts."""
        return self.config.max_delay
