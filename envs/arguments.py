"""Validation of the timing tasks' keyword arguments, shared by every task's config (grid and cue tasks).

Each helper returns the value in canonical form or raises ValueError naming the argument and the
value, so every env refuses bad input with the same words.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import numpy as np


def integer_argument(name: str, value: object) -> int:
    """`value` as an int (Python or numpy integer, not bool), else a ValueError naming `name`."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def integer_at_least(name: str, value: object, minimum: int) -> int:
    """`value` as an int >= `minimum`, else a ValueError naming `name`."""
    number = integer_argument(name, value)
    if number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return number


def delay_range_argument(delay_range: object, max_delay: int) -> tuple[int, int]:
    """`delay_range` as a pair of ints with 1 <= low <= high <= max_delay, else a ValueError naming it."""
    try:
        low, high = delay_range  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"delay_range must be a pair (low, high), got {delay_range!r}") from None
    low, high = integer_argument("delay_range", low), integer_argument("delay_range", high)
    if not 1 <= low <= high <= max_delay:
        raise ValueError(
            f"delay_range must satisfy 1 <= low <= high <= max_delay={max_delay}, got {delay_range!r}"
        )
    return low, high


def choice_argument(name: str, value: object, allowed: Sequence[object]) -> None:
    """Nothing if `value` is one of `allowed`, else a ValueError naming `name`."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")


def probability_argument(name: str, value: object) -> float:
    """`value` as a float in [0, 1] (a real number, not bool), else a ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return float(value)


def delay_argument(delay: object, max_delay: int) -> int:
    """`delay` as an int in 1..max_delay, else a ValueError naming it."""
    value = integer_argument("delay", delay)
    if not 1 <= value <= max_delay:
        raise ValueError(f"delay must be in 1..{max_delay} (max_delay), got {delay!r}")
    return value


def action_argument(action: object, num_actions: int) -> int:
    """One env's action as an int in 0..num_actions-1, else a ValueError naming `action`."""
    try:
        index = operator.index(action)
    except TypeError:
        raise ValueError(f"action must be an integer in 0..{num_actions - 1}, got {action!r}") from None
    if not 0 <= index < num_actions:
        raise ValueError(f"action must be an integer in 0..{num_actions - 1}, got {action!r}")
    return index


def actions_argument(actions: object, num_envs: int, num_actions: int) -> np.ndarray:
    """A vector env's actions as an integer array of shape (num_envs,) in 0..num_actions-1, else a
    ValueError naming `actions`."""
    actions = np.asarray(actions)
    if actions.shape != (num_envs,) or actions.dtype.kind not in "iu":
        raise ValueError(
            f"actions must be an integer array of shape ({num_envs},), "
            f"got {actions.dtype} array of shape {actions.shape}"
        )
    if actions.min() < 0 or actions.max() >= num_actions:
        bad = actions[(actions < 0) | (actions >= num_actions)]
        raise ValueError(f"actions must be in 0..{num_actions - 1}, got {bad[:8].tolist()}")
    return actions


def requested_delay(options: dict | None, checked_delay: Callable[[object], int]) -> int | None:
    """The T a reset's `options["delay"]` fixes, checked by the config's `checked_delay`; None when the
    options ask for none (T is then drawn from delay_range)."""
    if options and options.get("delay") is not None:
        return checked_delay(options["delay"])
    return None
