"""Choose one trained run per agent and ship its weights as nalu_rl/checkpoints/<agent>.pt.

The choice uses training-range performance only: the run whose evaluation has the highest mean
success rate over the delays of its own training range wins (on a tie, the first in name order).
Extrapolation, the thing the checkpoints are meant to show, plays no part in it. The evaluation
scored must be that of the run's `--checkpoint` file (default checkpoint.pt; best.pt for runs
evaluated on their best recent training success), the file shipped.

    python scripts/ship_checkpoints.py runs/symbolic --agents nac lstm nau
    python scripts/ship_checkpoints.py runs/pixels --agents nac --suffix=-pixels   # -> nac-pixels.pt
    python scripts/ship_checkpoints.py runs/sweeps/NAME --agents signed-count --evaluation long
    python scripts/ship_checkpoints.py runs/lc-best-interval --agents learned-count --suffix=-interval \
        --evaluation long --checkpoint best.pt
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from nalu_rl.checkpoint import SHIPPED_FOLDER, load_checkpoint, save_checkpoint


def training_range_success(evaluation: Path, delay_range: tuple[int, int]) -> float:
    """Mean success rate of an evaluation CSV over the delays of its run's training range."""
    low, high = delay_range
    with open(evaluation, newline="") as file:
        rows = csv.DictReader(file)
        rates = [float(row["success_rate"]) for row in rows if low <= int(row["delay"]) <= high]
    if len(rates) != high - low + 1:
        raise SystemExit(f"{evaluation}: it does not cover the training range {low}..{high}")
    return sum(rates) / len(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "root",
        type=Path,
        help="folder holding <agent>/seed<k>/ run folders, a sweep folder (<agent>-<obs>-seed<k>/), "
        "or <agent>-seed<k>/ (scripts/experiments/interval_timing_runs.sh)",
    )
    parser.add_argument(
        "--evaluation",
        default="",
        help="the run's evaluation to score: success_by_delay.csv in this subfolder of each run "
        "(default: the run folder's own)",
    )
    parser.add_argument(
        "--checkpoint", default="checkpoint.pt", help="the file of each run that was evaluated and is shipped"
    )
    parser.add_argument("--agents", nargs="+", required=True, help="agents to ship")
    parser.add_argument("--out", type=Path, default=SHIPPED_FOLDER, help="destination folder")
    parser.add_argument("--suffix", default="", help="appended to the agent's name in the file name")
    args = parser.parse_args()
    for agent in args.agents:
        scored = []
        runs = (
            sorted((args.root / agent).glob("seed*"))
            or sorted(args.root.glob(f"{agent}-*-seed*"))
            or sorted(args.root.glob(f"{agent}-seed*"))  # scripts/experiments/interval_timing_runs.sh
        )
        for run in runs:
            evaluation = run / args.evaluation / "success_by_delay.csv"
            if not evaluation.is_file():
                continue
            payload = load_checkpoint(run / args.checkpoint)
            delay_range = tuple(payload["config"]["delay_range"])
            scored.append((training_range_success(evaluation, delay_range), run, payload))
        if not scored:
            raise SystemExit(f"no finished runs of {agent} under {args.root}")
        for score, run, _ in scored:
            print(f"{agent:10s} {run}  training-range success {score:.3f}")
        score, run, payload = max(scored, key=lambda item: item[0])
        destination = args.out / f"{agent}{args.suffix}.pt"
        # Weights, wiring and config only: no optimizer state, so the file stays small.
        shipped = {key: payload[key] for key in ("config", "model", "wiring") if key in payload}
        save_checkpoint(destination, shipped)
        print(f"shipped {run} -> {destination} ({destination.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
