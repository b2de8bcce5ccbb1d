"""Per-seed summary of success-by-delay CSVs: who holds >= a fraction of the ceiling, and how far.

For each CSV (one seed of one agent, as kept under docs/data/<obs>/<agent>/seed<k>.csv) prints one
Markdown row: the mean success over the training range (as a fraction of the ceiling), the lowest
fraction of the ceiling over T in [--hold-from, --hold-to], the first T there below --hold
(none: holds), and the success rate at each of --show; then how many seeds hold, and the mean
training-range fraction of the ceiling over seeds with its 95% t-interval.
    python scripts/seed_table.py docs/data/symbolic/nau-saturated-count/seed*.csv
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

from nalu_rl.stats import t_interval


def read_rates(path: Path) -> dict[int, tuple[float, float]]:
    """{delay: (success_rate, ceiling)} of one evaluation CSV."""
    with open(path, newline="") as file:
        rows = csv.DictReader(file)
        return {int(row["delay"]): (float(row["success_rate"]), float(row["ceiling"])) for row in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", type=Path)
    parser.add_argument("--train-range", nargs=2, type=int, default=(5, 12), metavar=("LO", "HI"))
    parser.add_argument("--hold", type=float, default=0.9, help="fraction of the ceiling that holds")
    parser.add_argument("--hold-from", type=int, default=5)
    parser.add_argument("--hold-to", type=int, default=100)
    parser.add_argument("--show", default="12,20,40,100,200,500,1000", help="delays whose success is shown")
    args = parser.parse_args(argv)
    shown = [int(delay) for delay in args.show.split(",")]
    print(
        f"| seed | {args.train_range[0]}..{args.train_range[1]} (of ceiling) | lowest of ceiling, "
        f"T {args.hold_from}..{args.hold_to} | first T below {args.hold} | "
        + " | ".join(f"T={delay}" for delay in shown)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(shown))
    holding = 0
    training_fractions = []
    for path in args.csv:
        rates = read_rates(path)
        seed = re.sub(r"\D", "", path.stem) or path.stem
        lo, hi = args.train_range
        train = [rates[d][0] / rates[d][1] for d in range(lo, hi + 1) if d in rates]
        span = sorted(d for d in rates if args.hold_from <= d <= args.hold_to)
        fractions = {d: rates[d][0] / rates[d][1] for d in span}
        below = [d for d in span if fractions[d] < args.hold]
        holding += not below
        training_fraction = sum(train) / len(train)
        training_fractions.append(training_fraction)
        cells = [f"{rates[d][0]:.3f}" if d in rates else "" for d in shown]
        print(
            f"| {seed} | {training_fraction:.3f} | {min(fractions.values()):.3f} | "
            f"{below[0] if below else 'none'} | " + " | ".join(cells) + " |"
        )
    print(
        f"\n{holding} of {len(args.csv)} seeds hold >= {args.hold} of the ceiling at every evaluated T "
        f"from {args.hold_from} to {args.hold_to}."
    )
    if len(training_fractions) > 1:
        mean, low, high = t_interval(training_fractions)
        print(
            f"Mean over seeds of the training-range success as a fraction of the ceiling: {mean:.3f} "
            f"[{low:.3f}, {high:.3f}] (95% t-interval)."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
