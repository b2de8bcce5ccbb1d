"""The last point of per-seed learning curves, per agent: a Markdown table with each seed and the mean
over seeds [95% t-interval]; with -o, a figure of the curves (success rate and episode return
against steps, one line per seed, one colour per agent).

Reads DATA_DIR/<agent>/seed<k>.csv as `scripts/minigrid_curves.py` writes them (columns steps,
success_rate, episode_return; each value over the run's recent-episode window).

    python scripts/curve_table.py docs/data/minigrid [-o docs/figures/minigrid_memory.png] [--title T]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from nalu_rl.stats import t_interval

COLUMNS = ("success_rate", "episode_return")


def last_row(path: Path) -> dict[str, float]:
    """The last row of a curve CSV, as numbers."""
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    if not rows:
        raise ValueError(f"{path} has no rows")
    return {key: float(value) for key, value in rows[-1].items() if value != ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="The last point of per-seed learning curves, per agent, and their mean over seeds."
    )
    parser.add_argument("data_dir", type=Path, help="a folder of <agent>/seed<k>.csv (minigrid_curves.py)")
    parser.add_argument("-o", "--output", type=Path, help="also draw the curves to this image")
    parser.add_argument("--title", default="", help="the figure's title")
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
    print("| agent | seed | steps | " + " | ".join(COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for agent in agents:
        seeds = sorted((arguments.data_dir / agent).glob("seed*.csv"))
        rows = [last_row(path) for path in seeds]
        for path, row in zip(seeds, rows, strict=True):
            values = " | ".join(f"{row.get(column, float('nan')):.3f}" for column in COLUMNS)
            print(f"| {agent} | {path.stem.removeprefix('seed')} | {int(row['steps']):,} | {values} |")
        summaries = []
        for column in COLUMNS:
            values = [row[column] for row in rows if column in row]
            if len(values) < 2:  # no interval from one seed
                summaries.append(f"{values[0]:.3f}" if values else "-")
                continue
            mean, low, high = t_interval(values)
            summaries.append(f"{mean:.3f} [{low:.3f}, {high:.3f}]")
        print(f"| {agent} | mean of {len(rows)} | | " + " | ".join(summaries) + " |")
    if arguments.output is not None:
        draw_curves(arguments.data_dir, agents, arguments.output, arguments.title)
        print(f"wrote {arguments.output}")
    return 0


def draw_curves(data_dir: Path, agents: list[str], output: Path, title: str) -> None:
    """Success rate and episode return against steps, one line per seed, one colour per agent."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(1, len(COLUMNS), figsize=(11, 4))
    for index, agent in enumerate(agents):
        colour = f"C{index}"
        for number, path in enumerate(sorted((data_dir / agent).glob("seed*.csv"))):
            with path.open(newline="") as file:
                rows = [row for row in csv.DictReader(file)]
            for axis, column in zip(axes, COLUMNS, strict=True):
                points = [(float(row["steps"]), float(row[column])) for row in rows if row.get(column)]
                if points:
                    steps, values = zip(*points, strict=True)
                    axis.plot(steps, values, color=colour, alpha=0.8, label=agent if number == 0 else None)
    for axis, column in zip(axes, COLUMNS, strict=True):
        axis.set_xlabel("environment steps")
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
