"""Does a re-run reproduce a committed result? Per delay T, the committed seeds' mean success with its
95% t-interval, the re-run seeds' mean and each re-run seed, whether the re-run's mean lies inside
the committed interval, and Welch's t-test of whether the two sets of seeds differ (two-sided p);
then how many of the compared T lie inside, and at how many the sets differ at 5%, alone and with
Holm's correction for the number of T compared (a new draw of the same experiment falls outside a
narrow interval more often than 5% of the time: the interval is of the committed mean alone).

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

from nalu_rl.cli import parse_delays
from nalu_rl.figures import CurvePoint, curves_over_seeds, read_success_rows
from nalu_rl.stats import holm_rejections, welch_t_test


def curve_of(paths: list[Path]) -> tuple[dict[int, CurvePoint], dict[int, list[float]]]:
    """One agent's seeds: its curve by delay (mean and interval, as `plot --table` computes them)
    and each delay's success rates, one per CSV (seed)."""
    rows = read_success_rows(paths)
    curves = curves_over_seeds(rows)
    if len(curves) != 1:
        raise SystemExit(f"error: expected the seeds of one agent, got {', '.join(sorted(curves))}")
    rates: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        rates[int(row["delay"])].append(float(row["success_rate"]))
    (points,) = curves.values()
    return {point.delay: point for point in points}, rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Does a re-run reproduce a committed result, T by T?")
    parser.add_argument("--committed", nargs="+", type=Path, required=True, help="the committed seeds' CSVs")
    parser.add_argument("--rerun", nargs="+", type=Path, required=True, help="the re-run seeds' CSVs")
    parser.add_argument("--delays", help="only these delays, e.g. 5-12,100,1000 (default: every shared one)")
    arguments = parser.parse_args(argv)
    for name in ("committed", "rerun"):
        if len(getattr(arguments, name)) < 2:
            print(f"error: --{name} needs the CSVs of 2 seeds or more (an interval, a test)", file=sys.stderr)
            return 2
    committed, committed_rates = curve_of(arguments.committed)
    rerun, rerun_rates = curve_of(arguments.rerun)
    shared = sorted(set(committed) & set(rerun))
    if arguments.delays:
        wanted = set(parse_delays(arguments.delays))
        shared = [delay for delay in shared if delay in wanted]
    if not shared:
        print("error: the two sets share no delay", file=sys.stderr)
        return 2
    print(f"committed: {len(arguments.committed)} seeds; re-run: {len(arguments.rerun)} seeds")
    print("| T | committed mean [95%] | re-run mean | re-run seeds | inside | Welch p |")
    print("|---|---|---|---|---|---|")
    inside = 0
    p_values = []
    for delay in shared:
        point, rerun_mean = committed[delay], rerun[delay].success_rate
        within = point.ci_low <= rerun_mean <= point.ci_high
        inside += within
        p_values.append(welch_t_test(committed_rates[delay], rerun_rates[delay])[2])
        seeds = ", ".join(f"{rate:.3f}" for rate in rerun_rates[delay])
        print(
            f"| {delay} | {point.success_rate:.3f} [{point.ci_low:.3f}, {point.ci_high:.3f}] "
            f"| {rerun_mean:.3f} | {seeds} | {'yes' if within else 'no'} | {p_values[-1]:.3f} |"
        )
    print(f"the re-run's mean is inside the committed interval at {inside} of {len(shared)} delays")
    differ = sum(p_value < 0.05 for p_value in p_values)
    print(
        f"the two sets of seeds differ (Welch, p < 0.05) at {differ} of {len(shared)} delays; "
        f"with Holm's correction for {len(shared)} delays at {sum(holm_rejections(p_values))}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
