"""Makes docs/journal/2026-12-03-results.md, "The regulariser gated on training success (two seeds...".

The NAU regulariser and the recent training success of runs over training, from their TensorBoard logs.

One line per --every steps: the last logged `loss/regularizer` (mean of min(|w|, 1 - |w|) over
the NAU weights: 0 once every weight is -1, 0 or 1) and `charts/success_rate` up to that step.
    python scripts/experiments/regularizer_trace.py runs/symbolic/nau-saturated-count/seed*
"""

from __future__ import annotations

import argparse

from nalu_rl.run_scalars import read_series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run folders")
    parser.add_argument("--every", type=int, default=250_000, help="environment steps between lines")
    args = parser.parse_args()
    for run in args.runs:
        series = read_series(run, ["loss/regularizer", "charts/success_rate"])
        regularizer, success = series["loss/regularizer"], series["charts/success_rate"]
        print(run)
        last_step = max(event.step for event in regularizer)
        marks = [*range(args.every, last_step, args.every), last_step]
        for mark in marks:
            reg = [event for event in regularizer if event.step <= mark]
            rate = [event for event in success if event.step <= mark]
            if reg and rate:
                print(f"  {mark / 1e6:5.2f}M  regulariser {reg[-1].value:.3f}  success {rate[-1].value:.3f}")


if __name__ == "__main__":
    main()
