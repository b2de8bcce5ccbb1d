"""The figure of the project: success rate vs delay T, one curve per agent (drawn by `nalu_rl.plot`).

Rows with the same agent label and delay, from one CSV or several, are seeds of one agent: the
curve is their mean with a 95% t-interval across seeds. A label with a single seed shows the
Wilson interval of its episodes instead. The training range is shaded and the feasibility
ceiling dashed. `--log-x` draws the delay axis on a log scale, for evaluations out to T = 1000.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nalu_rl.errors import InputError
from nalu_rl.stats import t_interval

REQUIRED_COLUMNS = ("agent", "delay", "success_rate", "ceiling", "ci_low", "ci_high")


@dataclass(frozen=True)
class CurvePoint:
    """One point of an agent's curve: the success rate at a delay over its seeds, with a 95% interval."""

    delay: int
    success_rate: float
    ci_low: float
    ci_high: float
    seeds: int
    ceiling: float


def read_success_rows(paths: Iterable[str | os.PathLike]) -> list[dict[str, Any]]:
    """Rows of evaluation CSVs (`success_by_delay.csv`), numbers converted; InputError on a bad file."""
    rows = []
    for path in paths:
        path = Path(path)
        try:
            with open(path, newline="") as file:
                reader = csv.DictReader(file)
                missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or [])]
                if missing:
                    raise InputError(
                        f"{path} is not an evaluation CSV (missing columns: {', '.join(missing)})"
                    )
                for line_number, row in enumerate(reader, start=2):
                    try:
                        rows.append(
                            {
                                **row,
                                "delay": int(row["delay"]),
                                **{key: float(row[key]) for key in REQUIRED_COLUMNS[2:]},
                            }
                        )
                    except (TypeError, ValueError):
                        raise InputError(
                            f"{path}:{line_number}: not a number where one is expected"
                        ) from None
        except OSError as error:
            raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if not rows:
        raise InputError("the CSVs hold no rows")
    return rows


def curves_over_seeds(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[CurvePoint]]:
    """Group rows by agent label and delay into curves: mean over seeds and a 95% interval.

    With two or more seeds the interval is the t-interval of the seeds' success rates (clipped
    to [0, 1]); with one it is that row's Wilson interval.
    """
    grouped: dict[str, dict[int, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        grouped[str(row["agent"])][int(row["delay"])].append(row)
    curves = {}
    for label, by_delay in grouped.items():
        points = []
        for delay in sorted(by_delay):
            seeds = by_delay[delay]
            rates = [float(row["success_rate"]) for row in seeds]
            ceiling = max(float(row["ceiling"]) for row in seeds)
            if len(seeds) >= 2:
                mean, low, high = t_interval(rates)
                low, high = max(0.0, low), min(1.0, high)
            else:
                mean, low, high = rates[0], float(seeds[0]["ci_low"]), float(seeds[0]["ci_high"])
            points.append(CurvePoint(delay, mean, low, high, len(seeds), ceiling))
        curves[label] = points
    return curves


def plot_success_by_delay(
    rows: Iterable[Mapping[str, Any]],
    out_path: str | os.PathLike,
    train_range: tuple[int, int] | None = None,
    title: str | None = None,
    log_x: bool = False,
    delay_meaning: str | None = None,
) -> Path:
    """Draw success rate vs delay T, one curve per agent label, and save it as an image at `out_path`.

    `train_range` (LO, HI) is shaded when given. With `log_x` the delay axis is logarithmic (for
    delays far past the training range);
    `delay_meaning` says on that axis what T is in the task (its env's metadata["delay_meaning"]).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = curves_over_seeds(rows)
    if not curves:
        raise ValueError("nothing to plot: no rows")
    figure, axes = plt.subplots(figsize=(8, 5.4), dpi=120)
    all_delays = sorted({point.delay for points in curves.values() for point in points})
    if train_range is not None:
        axes.axvspan(
            train_range[0] - 0.5,
            train_range[1] + 0.5,
            color="0.88",
            zorder=0,
            label=f"training range {train_range[0]}-{train_range[1]}",
        )
    ceiling_by_delay: dict[int, float] = {}
    for points in curves.values():
        for point in points:
            ceiling_by_delay[point.delay] = max(ceiling_by_delay.get(point.delay, 0.0), point.ceiling)
    axes.plot(
        sorted(ceiling_by_delay),
        [ceiling_by_delay[delay] for delay in sorted(ceiling_by_delay)],
        linestyle="--",
        color="0.3",
        linewidth=1.2,
        label="ceiling (the best possible rate at T)",
        zorder=1,
    )
    for label in sorted(curves):
        points = curves[label]
        seeds = max(point.seeds for point in points)
        interval = f"{seeds} seeds, 95% t-interval" if seeds >= 2 else "95% Wilson interval"
        delays = [point.delay for point in points]
        (line,) = axes.plot(
            delays,
            [point.success_rate for point in points],
            marker="o",
            markersize=3,
            linewidth=1.6,
            label=f"{label} ({interval})",
            zorder=3,
        )
        axes.fill_between(
            delays,
            [point.ci_low for point in points],
            [point.ci_high for point in points],
            color=line.get_color(),
            alpha=0.2,
            linewidth=0,
            zorder=2,
        )
    axes.set_xlabel(f"delay T ({delay_meaning})" if delay_meaning else "delay T")
    axes.set_ylabel("success rate")
    axes.set_ylim(-0.02, 1.02)
    set_delay_axis(axes, all_delays, log_x)
    axes.grid(alpha=0.3)
    axes.set_title(title or "Success rate vs delay T")
    # Below the axes: inside, it would hide the curves wherever it went.
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8, frameon=False)
    return save_figure(figure, out_path)


def set_delay_axis(axes: Any, delays: Sequence[int], log_x: bool = False) -> None:
    """Scale and limit the x axis of `axes` to the sorted `delays`: linear, or logarithmic with `log_x`."""
    if log_x:
        from matplotlib.ticker import ScalarFormatter

        axes.set_xscale("log")
        # Half a step either side on the log scale, as +-0.5 is on the linear one.
        axes.set_xlim(delays[0] * 0.85, delays[-1] / 0.85)
        axes.xaxis.set_major_formatter(ScalarFormatter())  # 1, 10, 100, 1000 rather than 10^k
    else:
        axes.set_xlim(delays[0] - 0.5, delays[-1] + 0.5)


def markdown_table(curves: Mapping[str, Sequence[CurvePoint]]) -> str:
    """A Markdown table of success by delay: one row per delay, one column per agent ("mean [low, high]")."""
    labels = sorted(curves)
    by_label = {label: {point.delay: point for point in curves[label]} for label in labels}
    delays = sorted({delay for points in by_label.values() for delay in points})
    lines = [
        "| T | ceiling | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    for delay in delays:
        cells = []
        ceiling = 0.0
        for label in labels:
            point = by_label[label].get(delay)
            if point is None:
                cells.append("")
                continue
            ceiling = max(ceiling, point.ceiling)
            cells.append(f"{point.success_rate:.2f} [{point.ci_low:.2f}, {point.ci_high:.2f}]")
        lines.append(f"| {delay} | {ceiling:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def save_figure(figure: Any, out_path: str | os.PathLike) -> Path:
    """Lay out a matplotlib figure, write it to `out_path` (its folder created) and close it."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_path)
    plt.close(figure)
    return out_path
