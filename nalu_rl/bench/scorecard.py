"""The scorecard: per agent and task, what its seeds' evaluations say about timing in and far beyond
the training range, computed from the per-seed CSVs alone.

A results folder holds one evaluation CSV per trial (the columns of `nalu_rl.evaluation`), at
`<task>/<agent>-seed<k>.csv`. For each agent x task the scorecard gives, with `fraction` meaning
success / ceiling at a T (capped at 1):
- `in_range`: the mean fraction over the training delays, mean over seeds with its 95% t-interval;
- the mean fraction over seeds at each far T;
- `holds_to`: the largest evaluated T such that at least `seeds_needed_to_hold(n)` of the n seeds
  (4 of 5, 3 of 3) hold >= 0.9 of the ceiling at every evaluated T up to it (0: not even in range);
- `score`, the extrapolation score: the mean fraction over the far delays (13, 20, 50, 100, 200,
  500, 1000, spaced about evenly on a log scale), mean over seeds with its 95% t-interval.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nalu_rl.bench.protocol import HOLD_FRACTION, Protocol, seeds_needed_to_hold
from nalu_rl.errors import InputError
from nalu_rl.figures import read_success_rows
from nalu_rl.stats import t_interval

SEED_CSV_PATTERN = re.compile(r"(?P<agent>.+)-seed(?P<seed>\d+)\.csv")
SCORECARD_CSV = "scorecard.csv"
SCORECARD_MARKDOWN = "scorecard.md"


@dataclass(frozen=True)
class SeedResult:
    """One trial's evaluation: the fraction of the ceiling it reached at each evaluated T."""

    task: str
    agent: str
    seed: int
    fraction_by_delay: dict[int, float]


@dataclass(frozen=True)
class ScoreRow:
    """The scorecard's entry for one agent on one task."""

    task: str
    agent: str
    seeds: int
    in_range: tuple[float, float, float]  # mean, 95% low, 95% high (low == high with one seed)
    far_fractions: dict[int, float]
    holds_to: int
    score: tuple[float, float, float]


def seed_csv_path(results: Path, task: str, agent: str, seed: int) -> Path:
    """Where the evaluation CSV of one trial goes in a results folder."""
    return results / task / f"{agent}-seed{seed}.csv"


def read_seed_results(results: str | Path) -> list[SeedResult]:
    """Every per-seed CSV of a results folder (`<task>/<agent>-seed<k>.csv`); InputError for a folder
    without any, or a file that is not an evaluation CSV."""
    results = Path(results)
    if not results.is_dir():
        raise InputError(f"no results folder {results}")
    seed_results = []
    for path in sorted(results.glob("*/*.csv")):
        match = SEED_CSV_PATTERN.fullmatch(path.name)
        if match is None:
            continue
        fractions = {
            row["delay"]: min(1.0, row["success_rate"] / row["ceiling"]) if row["ceiling"] > 0 else 0.0
            for row in read_success_rows([path])
        }
        seed_results.append(SeedResult(path.parent.name, match["agent"], int(match["seed"]), fractions))
    if not seed_results:
        raise InputError(f"{results} holds no per-seed CSVs (<task>/<agent>-seed<k>.csv)")
    return seed_results


def _mean_and_interval(values: Sequence[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    return t_interval(values)


def holds_to(seeds: Sequence[SeedResult], delays: Sequence[int]) -> int:
    """The largest of `delays` up to which enough seeds hold >= 0.9 of the ceiling at every one of
    `delays` (0 when they do not hold at the first)."""
    needed = seeds_needed_to_hold(len(seeds))
    reach = []
    for seed in seeds:
        held = 0
        for delay in sorted(delays):
            if seed.fraction_by_delay.get(delay, 0.0) < HOLD_FRACTION:
                break
            held = delay
        reach.append(held)
    return sorted(reach, reverse=True)[needed - 1]


def score_rows(seed_results: Sequence[SeedResult], protocol: Protocol) -> list[ScoreRow]:
    """One row per (task, agent) found, in order of task, then agent. A seed lacking a delay of the
    protocol counts 0 there."""
    groups: dict[tuple[str, str], list[SeedResult]] = defaultdict(list)
    for result in seed_results:
        groups[(result.task, result.agent)].append(result)
    rows = []
    for (task, agent), seeds in sorted(groups.items()):
        in_range = [
            sum(seed.fraction_by_delay.get(delay, 0.0) for delay in protocol.training_delays)
            / len(protocol.training_delays)
            for seed in seeds
        ]
        far = {
            delay: sum(seed.fraction_by_delay.get(delay, 0.0) for seed in seeds) / len(seeds)
            for delay in protocol.far_delays
        }
        scores = [
            sum(seed.fraction_by_delay.get(delay, 0.0) for delay in protocol.far_delays)
            / len(protocol.far_delays)
            for seed in seeds
        ]
        rows.append(
            ScoreRow(
                task=task,
                agent=agent,
                seeds=len(seeds),
                in_range=_mean_and_interval(in_range),
                far_fractions=far,
                holds_to=holds_to(seeds, protocol.delays),
                score=_mean_and_interval(scores),
            )
        )
    return rows


def _interval_text(values: tuple[float, float, float], seeds: int) -> str:
    mean, low, high = values
    return f"{mean:.3f}" if seeds < 2 else f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def markdown_scorecard(rows: Sequence[ScoreRow], protocol: Protocol) -> str:
    """The scorecard as a Markdown table: one line per task and agent."""
    far = [str(delay) for delay in protocol.far_delays]
    low, high = protocol.training_delays[0], protocol.training_delays[-1]
    header = (
        f"| task | agent | seeds | in range {low}-{high} | "
        + " | ".join(f"T={delay}" for delay in far)
        + " | holds to | score |"
    )
    lines = [header, "|" + "---|" * (6 + len(far))]
    for row in rows:
        needed = seeds_needed_to_hold(row.seeds)
        lines.append(
            f"| {row.task} | {row.agent} | {row.seeds} | {_interval_text(row.in_range, row.seeds)} | "
            + " | ".join(f"{row.far_fractions[delay]:.2f}" for delay in protocol.far_delays)
            + f" | {row.holds_to or '-'} ({needed} of {row.seeds}) | {_interval_text(row.score, row.seeds)} |"
        )
    return "\n".join(lines) + "\n"


def write_scorecard(rows: Sequence[ScoreRow], protocol: Protocol, folder: str | Path) -> list[Path]:
    """Write the scorecard as `scorecard.csv` and `scorecard.md` in `folder`; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / SCORECARD_CSV
    with open(csv_path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(
            [
                "task",
                "agent",
                "seeds",
                "in_range",
                "in_range_low",
                "in_range_high",
                *(f"fraction_T{delay}" for delay in protocol.far_delays),
                "holds_to",
                "seeds_needed_to_hold",
                "score",
                "score_low",
                "score_high",
            ]
        )
        for row in rows:
            writer.writerow(
                [
                    row.task,
                    row.agent,
                    row.seeds,
                    *(round(value, 6) for value in row.in_range),
                    *(round(row.far_fractions[delay], 6) for delay in protocol.far_delays),
                    row.holds_to,
                    seeds_needed_to_hold(row.seeds),
                    *(round(value, 6) for value in row.score),
                ]
            )
    markdown_path = folder / SCORECARD_MARKDOWN
    markdown_path.write_text(markdown_scorecard(rows, protocol))
    return [csv_path, markdown_path]
