"""The last point of per-seed learning curves, per agent: a Markdown table with each seed and the mean
over seeds [95% t-interval].

Reads DATA_DIR/<agent>/seed<k>.csv as `scripts/minigrid_curves.py` writes them (columns steps,
success_rate, episode_return; each value over the run's recent-episode window).

    python scripts/curve_table.py docs/data/minigrid
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    arguments = parser.parse_args(argv)
    agents = sorted(path.name for path in arguments.data_dir.iterdir() if path.is_dir())
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
            mean, low, high = t_interval([row[column] for row in rows if column in row])
            summaries.append(f"{mean:.3f} [{low:.3f}, {high:.3f}]")
        print(f"| {agent} | mean of {len(rows)} | | " + " | ".join(summaries) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
