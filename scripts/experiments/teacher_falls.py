"""Makes docs/journal/2026-12-07-count-student-whole-steps.md, "The teachers' falls".

Where a count student's teacher fell, from the curve CSVs of handing-over runs
(`handover/teacher_success`, the teacher's success over its last 500 episodes): each logged point
at which it is more than DROP below the best of the three points before, and that best above 0.9,
shown with the two points before it; per point the teacher's success, the value loss and the gradient
norms of the critic and of the LSTM (`grad_norm/cores.memory`), before any clip. A fall that goes on
over several points is listed at each. At most FIRST falls a run, from step FROM on; then how many
runs had one, and over all falls shown, how often the LSTM's gradient norm at the point before was
more than ten times its norm two points before, and how often the critic's was.

    python scripts/experiments/teacher_falls.py --first 1 \
        docs/data/count-student/count-student-steady-ReadySetGo-seed*.csv
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import Counter
from pathlib import Path

from nalu_rl.cli import run_cli
from nalu_rl.errors import InputError

COLUMNS = ("handover/teacher_success", "loss/value", "grad_norm/critic", "grad_norm/cores.memory")


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def falls(rows: list[dict[str, str]], drop: float, first: int, start: int = 0) -> list[int]:
    """The indices of the points at which the teacher's success fell, from step `start` on (module
    docstring)."""
    success = [_number(row["handover/teacher_success"]) for row in rows]
    found: list[int] = []
    for index in range(3, len(rows)):
        if int(rows[index]["step"]) < start:
            continue
        before = [value for value in success[index - 3 : index] if not math.isnan(value)]
        if before and max(before) > 0.9 and success[index] < max(before) - drop:
            found.append(index)
            if len(found) == first:
                break
    return found


def read_curves(path: Path) -> list[dict[str, str]]:
    """The rows of a handing-over run's curve CSV; an InputError for a missing file or other columns."""
    if not path.is_file():
        raise InputError(f"curve CSV not found: {path}")
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or any(name not in rows[0] for name in COLUMNS):
        raise InputError(f"{path}: not the curves of a handing-over run (needs {', '.join(COLUMNS)})")
    return rows


def describe(row: dict[str, str]) -> str:
    teacher, value, critic, memory = (_number(row[name]) for name in COLUMNS)
    return f"{int(row['step']) / 1e6:.2f}M: {teacher:.2f}, {value:.3f}, {critic:.2f}, {memory:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    parser.add_argument("curves", nargs="+", type=Path, help="curve CSVs (scripts/scalars_csv.py)")
    parser.add_argument("--drop", type=float, default=0.3)
    parser.add_argument("--first", type=int, default=2)
    parser.add_argument("--from", dest="start", type=int, default=0, help="count falls from this step on")
    args = parser.parse_args(argv)
    curves = [(path, read_curves(path)) for path in args.curves]
    print("| run | two points before | the point before | the fall |")
    print("|---|---|---|---|")
    shown = runs_with_one = 0
    # Per gradient norm, the falls at whose point before it was over 10x its norm two points before.
    jumped_first: Counter[str] = Counter()
    for path, rows in curves:
        found = falls(rows, args.drop, args.first, args.start)
        runs_with_one += bool(found)
        for index in found:
            cells = " | ".join(describe(rows[at]) for at in (index - 2, index - 1, index))
            print(f"| {path.stem} | {cells} |")
            shown += 1
            earlier, before = rows[index - 2], rows[index - 1]
            for name in ("grad_norm/cores.memory", "grad_norm/critic"):
                jumped_first[name] += _number(before[name]) > 10 * _number(earlier[name])
    print()
    print("Each cell: step: the teacher's success, the value loss, the critic's, the LSTM's gradient norm.")
    print(f"Runs with a fall: {runs_with_one} of {len(args.curves)}.")
    memory, critic = jumped_first["grad_norm/cores.memory"], jumped_first["grad_norm/critic"]
    print(
        f"Of {shown} falls, the LSTM's gradient norm at the point before was over 10x its norm two points "
        f"before in {memory}; the critic's in {critic}."
    )


if __name__ == "__main__":
    run_cli(main)
