"""Makes docs/RESULTS.md, "MiniGrid's memory task, through `--env-id` (3 seeds each, a fixed budget)".

Per-seed learning curves of the MiniGrid runs: success rate and episode return against steps.

Reads the TensorBoard scalars every run writes (`charts/success_rate`, `charts/episode_return`: over
the run's recent-episode window) from RUNS_DIR/<agent>/seed<k>/ and writes one CSV per run,
DATA_DIR/<agent>/seed<k>.csv, with columns steps, success_rate, episode_return. Prints each run's
last row.

    python scripts/experiments/minigrid_curves.py [RUNS_DIR] [DATA_DIR]
    (defaults runs/minigrid, docs/data/minigrid)
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from nalu_rl.run_scalars import read_rows

CURVES = {"success_rate": "charts/success_rate", "episode_return": "charts/episode_return"}


def run_curves(folder: Path) -> list[dict[str, float]]:
    """The rows (steps, success_rate, episode_return) of one run folder's TensorBoard scalars, by step."""
    columns = {tag: column for column, tag in CURVES.items()}
    return [
        {"steps": step, **{columns[tag]: round(value, 6) for tag, value in row.items()}}
        for step, row in read_rows(folder, list(columns)).items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", nargs="?", default="runs/minigrid", type=Path)
    parser.add_argument("data_dir", nargs="?", default="docs/data/minigrid", type=Path)
    arguments = parser.parse_args(argv)
    folders = sorted(path.parent for path in arguments.runs_dir.glob("*/seed*/config.json"))
    if not folders:
        print(f"error: no run folders <agent>/seed<k> under {arguments.runs_dir}", file=sys.stderr)
        return 2
    for folder in folders:
        rows = run_curves(folder)
        agent, seed = folder.parent.name, folder.name
        target = arguments.data_dir / agent / f"{seed}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=["steps", *CURVES], restval="")
            writer.writeheader()
            writer.writerows(rows)
        print(f"{agent} {seed}: {len(rows)} points, last {rows[-1] if rows else 'none'} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
