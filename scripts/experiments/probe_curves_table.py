"""Makes docs/POPGYM_DEFAULTS.md, "The value loss through the shared LSTM".

A table of one-seed probe runs from their curves: per run, the recent return at a common step, the
first step at which that return reached a level, and the run's last step and return.

Reads CSVs written by `scripts/scalars_csv.py` (a column `step`, a column per scalar, among them
`charts/episode_return`; `popgym/mmer` too where the run logged it).

    python scripts/experiments/probe_curves_table.py docs/data/popgym/value-loss-probe --at 200000 \
        --reach 0.5 [--runs 'rp-*']
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: curve_table's CSV reader

from curve_table import curve_rows  # noqa: E402

RETURN = "charts/episode_return"
MMER = "popgym/mmer"


def read_curve(path: Path) -> list[dict[str, float]]:
    """The rows of a scalars CSV (in step order, as scalars_csv.py writes them) as numbers."""
    rows = curve_rows(path)
    if RETURN not in rows[0]:
        raise ValueError(f"{path} has no {RETURN} column")
    return rows


def row_at(rows: list[dict[str, float]], step: float) -> dict[str, float] | None:
    """The first logged row at or after `step` (None: the run stopped before it)."""
    return next((row for row in rows if row["step"] >= step), None)


def first_reaching(rows: list[dict[str, float]], level: float) -> float | None:
    """The first logged step whose recent return is at least `level` (None: never)."""
    return next((row["step"] for row in rows if row[RETURN] >= level), None)


def table(paths: list[Path], at: float, reach: float) -> str:
    lines = [
        f"| run | return at {at:,.0f} steps | first step with return >= {reach:g} | last step | "
        "return at the last step | MMER at the last step |",
        "|---|---|---|---|---|---|",
    ]
    for path in paths:
        rows = read_curve(path)
        point, last = row_at(rows, at), rows[-1]
        reached = first_reaching(rows, reach)
        mmer = last.get(MMER, math.nan)
        lines.append(
            f"| {path.stem} | {'-' if point is None else f'{point[RETURN]:.3f}'} | "
            f"{'never' if reached is None else f'{reached:,.0f}'} | {last['step']:,.0f} | "
            f"{last[RETURN]:.3f} | {'-' if math.isnan(mmer) else f'{mmer:.3f}'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("folder", type=Path, help="a folder of scalars CSVs, one per run")
    parser.add_argument("--at", type=float, required=True, help="the common step of the second column")
    parser.add_argument("--reach", type=float, required=True, help="the return level of the third column")
    parser.add_argument("--runs", default="*", help="a glob over the CSVs' names (default: all)")
    arguments = parser.parse_args(argv)
    paths = sorted(arguments.folder.glob(f"{arguments.runs}.csv"))
    if not paths:
        print(f"error: no {arguments.runs}.csv in {arguments.folder}", file=sys.stderr)
        return 2
    try:
        print(table(paths, arguments.at, arguments.reach))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
