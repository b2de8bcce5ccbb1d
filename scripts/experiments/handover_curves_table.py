"""Makes docs/journal/2026-12-07-count-student-clip-by-part.md, "The gradient clipped part by part".

Per run of a count-student agent, from its curve CSV (`scripts/scalars_csv.py` of the run's
TensorBoard log, `docs/data/count-student/<agent>-<task>-seed<k>.csv`): the first logged step at which
the teacher's success reached 0.9, how often the regulariser's gate closed, the student's best logged
success in its own episodes, the step at which the handover reached 1 (the student plays alone), and
the handover and the training success at the end. A Markdown table, one row per CSV:

    python scripts/experiments/handover_curves_table.py docs/data/count-student/count-student-steady-*.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import re
from pathlib import Path

TEACHER = "handover/teacher_success"
STUDENT = "handover/student_success"
HANDOVER = "loss/handover"
CLOSINGS = "runtime/regularizer_closings"
SUCCESS = "charts/success_rate"


def _number(row: dict[str, str], key: str) -> float:
    value = row.get(key, "")
    return float(value) if value not in ("", None) else math.nan


def run_summary(path: Path) -> dict[str, str]:
    """The row of the table for one curve CSV."""
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    if not rows:
        raise SystemExit(f"error: {path} has no rows")
    steps = [_number(row, "step") for row in rows]
    teacher = [_number(row, TEACHER) for row in rows]
    student = [_number(row, STUDENT) for row in rows]
    handover = [_number(row, HANDOVER) for row in rows]
    learned = next((step for step, value in zip(steps, teacher, strict=True) if value >= 0.9), None)
    alone = next((step for step, value in zip(steps, handover, strict=True) if value >= 1.0), None)
    practised = [value for value in student if not math.isnan(value)]
    last = rows[-1]
    match = re.search(r"-seed(\d+)\.csv$", path.name)
    return {
        "run": path.stem,
        "seed": match.group(1) if match else "?",
        "teacher >= 0.9 from": f"{learned / 1e6:.2f}M" if learned is not None else "never",
        # A gate that never closes logs no closings (its run has no gate fall).
        "gate closings": f"{_number(last, CLOSINGS):.0f}" if CLOSINGS in last else "-",
        "student's best": f"{max(practised):.3f}" if practised else "-",
        "handover 1 from": f"{alone / 1e6:.2f}M" if alone is not None else "never",
        "handover at end": f"{_number(last, HANDOVER):.2f}",
        "success at end": f"{_number(last, SUCCESS):.3f}",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="The course of each count-student run's handover, from its curve CSV (Markdown)."
    )
    parser.add_argument("curves", nargs="+", type=Path, help="curve CSVs of count-student runs")
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.curves if not path.is_file()]
    if missing:
        raise SystemExit(f"error: no such file: {', '.join(missing)}")
    summaries = [run_summary(path) for path in args.curves]
    columns = list(summaries[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for summary in summaries:
        print("| " + " | ".join(summary[column] for column in columns) + " |")


if __name__ == "__main__":
    main()
