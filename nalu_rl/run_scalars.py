"""A run folder's TensorBoard scalars read back: every logged point of the tags asked for, as series
(step, value, wall time) or as rows by step, for the scripts that turn runs into tables and curves."""

from __future__ import annotations

import os
from typing import NamedTuple


class ScalarPoint(NamedTuple):
    """One logged value of a scalar: the run's environment step, the value, the wall-clock time."""

    step: int
    value: float
    wall_time: float


def read_series(folder: str | os.PathLike, tags: list[str] | None = None) -> dict[str, list[ScalarPoint]]:
    """Every point of each scalar of the run in `folder`, in the order logged: the tags asked for
    that the run logged (all its scalars for None); a tag it did not log is absent."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})  # 0: keep every point
    accumulator.Reload()
    logged = accumulator.Tags().get("scalars", [])
    wanted = sorted(logged) if tags is None else [tag for tag in tags if tag in logged]
    return {
        tag: [
            ScalarPoint(int(event.step), float(event.value), float(event.wall_time))
            for event in accumulator.Scalars(tag)
        ]
        for tag in wanted
    }


def read_rows(folder: str | os.PathLike, tags: list[str] | None = None) -> dict[int, dict[str, float]]:
    """The same points as rows: {step: {tag: value}} over the steps at which any of the tags was
    logged (a tag not logged at a step is absent from its row; the last value logged at a step wins)."""
    rows: dict[int, dict[str, float]] = {}
    for tag, points in read_series(folder, tags).items():
        for point in points:
            rows.setdefault(point.step, {})[tag] = point.value
    return dict(sorted(rows.items()))
