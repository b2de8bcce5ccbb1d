"""The last point of per-seed learning curves, per agent: a Markdown table with each seed and the mean
over seeds [95% t-interval]; with -o, a figure of the curves (success rate and episode return
against steps, one line per seed, one colour per agent).

Reads DATA_DIR/<agent>/seed<k>.csv as `scripts/experiments/minigrid_curves.py` writes them (columns steps,
success_rate, episode_return; each value over the run's recent-episode window).

    python scripts/curve_table.py docs/data/minigrid [-o docs/figures/minigrid_memory.png] [--title T]
        [--reach 0.9]   (also the first step at which each seed's success rate reached 0.9, and its
                         lowest success rate from there on)
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from nalu_rl.stats import t_interval

COLUMNS = ("success_rate", "episode_return")


def curve_rows(path: Path) -> list[dict[str, float]]:
    """The rows of a curve CSV, as numbers (ValueError when it has none)."""
    with path.open(newline="") as file:
        read = list(csv.DictReader(file))
    rows = [{key: float(value) for key, value in row.items() if value != ""} for row in read]
    if not rows:
        raise ValueError(f"{path} has no rows")
    return rows


def steps_to_reach(rows: list[dict[str, float]], success: float) -> tuple[float, float] | None:
    """The first logged step at which a curve's success rate is at least `success`, and the lowest
    success rate from there on (None: never reached)."""
    rates = [(row["steps"], row["success_rate"]) for row in rows if "success_rate" in row]
    first = next((index for index, (_, rate) in enumerate(rates) if rate >= success), None)
    if first is None:
        return None
    return rates[first][0], min(rate for _, rate in rates[first:])


def summary(values: list[float], digits: str = ".3f") -> str:
    """The mean of `values` with its 95% t-interval ("-" for none, the value alone for one)."""
    if len(values) < 2:
        return f"{values[0]:{digits}}" if values else "-"
    mean, low, high = t_interval(values)
    return f"{mean:{digits}} [{low:{digits}}, {high:{digits}}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="The last point of per-seed learning curves, per agent, and their mean over seeds."
    )
    parser.add_argument("data_dir", type=Path, help="a folder of <agent>/seed<k>.csv (minigrid_curves.py)")
    parser.add_argument("-o", "--output", type=Path, help="also draw the curves to this image")
    parser.add_argument("--title", default="", help="the figure's title")
    parser.add_argument(
        "--reach",
        type=float,
        help="also give the first step at which each seed's success rate reached this (0..1) and the "
        "lowest success rate after it",
    )
    arguments = parser.parse_args(argv)
    if not arguments.data_dir.is_dir():
        print(f"error: {arguments.data_dir} is not a folder", file=sys.stderr)
        return 2
    # An agent is a folder of seed<k>.csv (others, such as logs/, are not).
    agents = sorted(
        path.name for path in arguments.data_dir.iterdir() if path.is_dir() and any(path.glob("seed*.csv"))
    )
    if not agents:
        print(f"error: no <agent>/seed<k>.csv under {arguments.data_dir}", file=sys.stderr)
        return 2
    reach = arguments.reach
    reach_header = f" steps to success >= {reach:g} | lowest success after |" if reach is not None else ""
    print("| agent | seed | steps | " + " | ".join(COLUMNS) + " |" + reach_header)
    print("|---|---|---|" + "---|" * (len(COLUMNS) + 2 * (reach is not None)))
    for agent in agents:
        seeds = sorted((arguments.data_dir / agent).glob("seed*.csv"))
        curves = [curve_rows(path) for path in seeds]
        rows = [curve[-1] for curve in curves]
        reached = [steps_to_reach(curve, reach) for curve in curves] if reach is not None else []
        for index, (path, row) in enumerate(zip(seeds, rows, strict=True)):
            values = " | ".join(f"{row.get(column, float('nan')):.3f}" for column in COLUMNS)
            if reach is not None:
                first = reached[index]
                values += f" | {first[0]:,.0f} | {first[1]:.3f}" if first is not None else " | never | -"
            print(f"| {agent} | {path.stem.removeprefix('seed')} | {int(row['steps']):,} | {values} |")
        summaries = [summary([row[column] for row in rows if column in row]) for column in COLUMNS]
        if reach is not None:
            steps = [value[0] for value in reached if value is not None]
            summaries.append(f"{summary(steps, ',.0f')} ({len(steps)} of {len(seeds)} reached it)")
            summaries.append(summary([value[1] for value in reached if value is not None]))
        print(f"| {agent} | mean of {len(rows)} | | " + " | ".join(summaries) + " |")
    if arguments.output is not None:
        draw_curves(arguments.data_dir, agents, arguments.output, arguments.title)
        print(f"wrote {arguments.output}")
    return 0


def steps_label(steps: float, _position: object = None) -> str:
    """A step count as an axis label: 0, 500, 100k, 1.5M."""
    if abs(steps) >= 1e6:
        return f"{steps / 1e6:g}M"
    return f"{steps / 1e3:g}k" if abs(steps) >= 1e3 else f"{steps:g}"


def draw_curves(data_dir: Path, agents: list[str], output: Path, title: str) -> None:
    """Success rate and episode return against steps, one line per seed, one colour per agent."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.ticker import FuncFormatter

    figure, axes = pyplot.subplots(1, len(COLUMNS), figsize=(11, 4))
    for index, agent in enumerate(agents):
        colour = f"C{index}"
        for number, path in enumerate(sorted((data_dir / agent).glob("seed*.csv"))):
            rows = curve_rows(path)
            for axis, column in zip(axes, COLUMNS, strict=True):
                points = [(row["steps"], row[column]) for row in rows if column in row]
                if points:
                    steps, values = zip(*points, strict=True)
                    axis.plot(steps, values, color=colour, alpha=0.8, label=agent if number == 0 else None)
    for axis, column in zip(axes, COLUMNS, strict=True):
        axis.set_xlabel("environment steps")
        # 100k, 1.5M: plain numbers of six digits run into each other under the axis.
        axis.xaxis.set_major_formatter(FuncFormatter(steps_label))
        axis.set_ylabel(column.replace("_", " ") + " (recent episodes)")
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(title)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=100)
    pyplot.close(figure)


if __name__ == "__main__":
    sys.exit(main())
