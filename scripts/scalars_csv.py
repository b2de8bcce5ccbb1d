"""Write a run's TensorBoard scalars as one CSV (a row per logged step, a column per scalar).

python scripts/scalars_csv.py RUN_FOLDER -o curves.csv [--tags charts/episode_return loss/value ...]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="run folder holding TensorBoard event files")
    parser.add_argument("-o", "--out", type=Path, required=True, help="CSV to write")
    parser.add_argument("--tags", nargs="*", help="scalars to keep (default: all)")
    args = parser.parse_args(argv)
    from nalu_rl.run_scalars import read_rows

    rows = read_rows(args.run, args.tags or None)
    logged = {tag for row in rows.values() for tag in row}
    tags = args.tags or sorted(logged)
    missing = [tag for tag in tags if tag not in logged]
    if missing:
        print(f"error: {args.run} has no scalars {missing}", file=sys.stderr)
        return 2
    with args.out.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["step", *tags])
        for step in sorted(rows):
            writer.writerow([step, *(f"{rows[step].get(tag, float('nan')):.6g}" for tag in tags)])
    print(f"{len(rows)} rows of {len(tags)} scalars written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
