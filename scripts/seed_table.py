"""Per-seed summary of success-by-delay CSVs: who holds >= a fraction of the ceiling, and how far.

For each CSV (one seed of one agent, as kept under docs/data/<obs>/<agent>/seed<k>.csv) prints one
Markdown row: the mean success over the training range (as a fraction of the ceiling), the lowest
fraction of the ceiling over T in [--hold-from, --hold-to], the first T there below --hold
(none: holds), with --tail-from T the highest success rate at any evaluated delay >= T (and
where), and the success rate at each of --show; then how many seeds hold, and the mean
training-range fraction of the ceiling over seeds with its 95% t-interval.

Every comparison is exact: a seed's rate is its `successes / episodes` and the ceiling is the
enumerated fraction for the grid (29/30 at T = 6 on the 5 x 5 grid), so 174/200 at T = 6 is
exactly 0.9 of the ceiling and holds. The CSV's rounded `success_rate` and `ceiling` columns are
not used, except that the `ceiling` column must agree with --size (and --env-id: the ceiling is
taken at the step the task's arrival is due, T on TimeTrack, 2T on IntervalTiming).
    python scripts/seed_table.py docs/data/symbolic/nau-saturated-count/seed*.csv
    python scripts/seed_table.py --env-id nalu_rl/IntervalTiming-v0 docs/data/interval-timing/nac/seed*.csv
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import gymnasium

import nalu_rl.envs  # noqa: F401  (registers the timing tasks)
from nalu_rl.environment import task_options
from nalu_rl.envs.rules import success_ceiling_exact
from nalu_rl.stats import t_interval

Ceiling = Callable[[int], Fraction]


def task_ceiling(env_id: str = "nalu_rl/TimeTrack-v0", size: int = 5) -> Ceiling:
    """The exact ceiling at delay T of a timing task: on a `size` x `size` grid for a grid task, the
    task's own `success_ceiling_exact` for one without a grid (the cue tasks)."""
    if "size" not in task_options(env_id):
        return gymnasium.make(env_id).unwrapped.success_ceiling_exact
    env = gymnasium.make(env_id, obs_mode="symbolic", size=size).unwrapped
    return lambda delay: success_ceiling_exact(env.due_time(delay), size)


# The CSV's ceiling column is written with 6 decimals; a larger gap means another grid size.
CEILING_COLUMN_TOLERANCE = 1e-6


@dataclass(frozen=True)
class SeedSummary:
    """One seed's evaluation against the ceiling, every fraction exact."""

    seed: str
    success_rates: dict[int, Fraction]
    training_fraction: Fraction
    lowest_fraction: Fraction | None
    first_below: int | None


def read_counts(path: Path, size: int = 5, ceiling: Ceiling | None = None) -> dict[int, tuple[int, int]]:
    """{delay: (successes, episodes)} of one evaluation CSV, checked against the task's ceilings."""
    ceiling = ceiling or task_ceiling(size=size)
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    counts = {}
    for row in rows:
        try:
            delay, successes, episodes = int(row["delay"]), int(row["successes"]), int(row["episodes"])
        except KeyError as missing:
            raise ValueError(f"{path}: no column {missing} (need delay, successes, episodes)") from None
        if episodes <= 0 or not 0 <= successes <= episodes:
            raise ValueError(f"{path}: T = {delay} has {successes} successes of {episodes} episodes")
        if "ceiling" in row and abs(float(row["ceiling"]) - ceiling(delay)) > (CEILING_COLUMN_TOLERANCE):
            raise ValueError(
                f"{path}: the ceiling column at T = {delay} ({row['ceiling']}) is not the {size} x {size} "
                "grid's; pass the grid size with --size and the task with --env-id"
            )
        counts[delay] = (successes, episodes)
    return counts


def summarize_seed(
    path: Path,
    train_range: tuple[int, int] = (5, 12),
    hold: Fraction = Fraction(9, 10),
    hold_span: tuple[int, int] = (5, 100),
    size: int = 5,
    ceiling: Ceiling | None = None,
) -> SeedSummary:
    """Summarise one seed's CSV: training-range fraction of the ceiling, lowest fraction, first T below."""
    ceiling = ceiling or task_ceiling(size=size)
    counts = read_counts(path, size, ceiling)
    rates = {delay: Fraction(successes, episodes) for delay, (successes, episodes) in counts.items()}
    of_ceiling = {delay: rate / ceiling(delay) for delay, rate in rates.items()}
    train = [of_ceiling[d] for d in range(train_range[0], train_range[1] + 1) if d in of_ceiling]
    if not train:
        raise ValueError(f"{path}: no delay in the training range {train_range[0]}..{train_range[1]}")
    span = sorted(d for d in of_ceiling if hold_span[0] <= d <= hold_span[1])
    below = [d for d in span if of_ceiling[d] < hold]
    return SeedSummary(
        seed=re.sub(r"\D", "", path.stem) or path.stem,
        success_rates=rates,
        training_fraction=sum(train, Fraction(0)) / len(train),
        lowest_fraction=min((of_ceiling[d] for d in span), default=None),
        first_below=below[0] if below else None,
    )


def three_decimals(value: Fraction | None) -> str:
    """`value` rounded exactly (half to even) to 3 decimals; empty for None."""
    return "" if value is None else f"{float(round(value, 3)):.3f}"


def highest_from(success_rates: dict[int, Fraction], first_delay: int) -> str:
    """The highest success rate at delays >= first_delay and the first delay where it occurs."""
    tail = {delay: rate for delay, rate in success_rates.items() if delay >= first_delay}
    if not tail:
        return ""
    delay = min(tail, key=lambda d: (-tail[d], d))
    return f"{three_decimals(tail[delay])} (T = {delay})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", type=Path)
    parser.add_argument("--train-range", nargs=2, type=int, default=(5, 12), metavar=("LO", "HI"))
    parser.add_argument(
        "--hold", type=Fraction, default=Fraction(9, 10), help="fraction of the ceiling that holds (exact)"
    )
    parser.add_argument("--hold-from", type=int, default=5)
    parser.add_argument("--hold-to", type=int, default=100)
    parser.add_argument("--size", type=int, default=5, help="grid size of the evaluated runs")
    parser.add_argument(
        "--env-id", default="nalu_rl/TimeTrack-v0", help="the timing task of the evaluated runs (its ceiling)"
    )
    parser.add_argument("--show", default="12,20,40,100,200,500,1000", help="delays whose success is shown")
    parser.add_argument(
        "--tail-from",
        type=int,
        default=None,
        metavar="T",
        help="also show the highest success at delays >= T",
    )
    args = parser.parse_args(argv)
    try:
        shown = [int(delay) for delay in args.show.split(",")]
        ceiling = task_ceiling(args.env_id, args.size)
        summaries = [
            summarize_seed(
                path, tuple(args.train_range), args.hold, (args.hold_from, args.hold_to), args.size, ceiling
            )
            for path in args.csv
        ]
    except (OSError, ValueError, gymnasium.error.Error) as error:
        parser.exit(2, f"seed_table.py: error: {error}\n")
    hold = f"{float(args.hold):g}"
    print(
        f"| seed | {args.train_range[0]}..{args.train_range[1]} (of ceiling) | lowest of ceiling, "
        f"T {args.hold_from}..{args.hold_to} | first T below {hold} | "
        + ("" if args.tail_from is None else f"highest at T >= {args.tail_from} | ")
        + " | ".join(f"T={delay}" for delay in shown)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * (len(shown) + (args.tail_from is not None)))
    for summary in summaries:
        cells = [three_decimals(summary.success_rates.get(delay)) for delay in shown]
        first_below = "none" if summary.first_below is None else summary.first_below
        tail = "" if args.tail_from is None else f"{highest_from(summary.success_rates, args.tail_from)} | "
        print(
            f"| {summary.seed} | {three_decimals(summary.training_fraction)} | "
            f"{three_decimals(summary.lowest_fraction)} | {first_below} | {tail}" + " | ".join(cells) + " |"
        )
    holding = sum(summary.first_below is None for summary in summaries)
    print(
        f"\n{holding} of {len(summaries)} seeds hold >= {hold} of the ceiling at every evaluated T "
        f"from {args.hold_from} to {args.hold_to}."
    )
    if len(summaries) > 1:
        mean, low, high = t_interval([float(summary.training_fraction) for summary in summaries])
        print(
            f"Mean over seeds of the training-range success as a fraction of the ceiling: {mean:.3f} "
            f"[{low:.3f}, {high:.3f}] (95% t-interval)."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
