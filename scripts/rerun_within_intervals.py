"""Does a re-run reproduce a committed result? Per delay T, the committed seeds' mean success with its
95% t-interval, the re-run seeds' mean and each re-run seed, and whether the re-run's mean lies
inside the committed interval; then how many of the compared T do.

    python scripts/rerun_within_intervals.py --committed docs/data/symbolic/nac/seed*.csv \
        --rerun docs/data/reruns/symbolic/nac/seed*.csv [--delays 5-12,13,14,15,20,40,60,100,200,500,1000]

Both sets are evaluation CSVs (`success_by_delay.csv` of `python -m nalu_rl.evaluate`); a delay is
compared where both sets have it. The interval is the one `python -m nalu_rl.plot --table` prints.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from nalu_rl.figures import read_success_rows
from nalu_rl.stats import t_interval


def rates_by_delay(paths: list[Path]) -> dict[int, list[float]]:
    """Each delay's success rates, one per CSV (seed)."""
    rates: dict[int, list[float]] = defaultdict(list)
    for path in paths:
        for row in read_success_rows([path]):
            rates[int(row["delay"])].append(float(row["success_rate"]))
    return rates


def parse_delays(text: str) -> list[int]:
    """`5-12,100` -> [5, ..., 12, 100]."""
    delays = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        delays += range(int(low), int(high or low) + 1)
    return delays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--committed", nargs="+", type=Path, required=True, help="the committed seeds' CSVs")
    parser.add_argument("--rerun", nargs="+", type=Path, required=True, help="the re-run seeds' CSVs")
    parser.add_argument("--delays", help="only these delays, e.g. 5-12,100,1000 (default: every shared one)")
    arguments = parser.parse_args(argv)
    committed, rerun = rates_by_delay(arguments.committed), rates_by_delay(arguments.rerun)
    shared = sorted(set(committed) & set(rerun))
    if arguments.delays:
        wanted = set(parse_delays(arguments.delays))
        shared = [delay for delay in shared if delay in wanted]
    if not shared:
        print("error: the two sets share no delay", file=sys.stderr)
        return 2
    print(f"committed: {len(arguments.committed)} seeds; re-run: {len(arguments.rerun)} seeds")
    print("| T | committed mean [95%] | re-run mean | re-run seeds | inside |")
    print("|---|---|---|---|---|")
    inside = 0
    for delay in shared:
        mean, low, high = t_interval(committed[delay])
        low, high = max(0.0, low), min(1.0, high)
        rerun_mean = sum(rerun[delay]) / len(rerun[delay])
        within = low <= rerun_mean <= high
        inside += within
        seeds = ", ".join(f"{rate:.3f}" for rate in rerun[delay])
        print(
            f"| {delay} | {mean:.3f} [{low:.3f}, {high:.3f}] | {rerun_mean:.3f} | {seeds} | "
            f"{'yes' if within else 'no'} |"
        )
    print(f"the re-run's mean is inside the committed interval at {inside} of {len(shared)} delays")
    return 0


if __name__ == "__main__":
    sys.exit(main())
