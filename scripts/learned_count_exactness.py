"""Is a `learned-count` checkpoint's count exact? For each checkpoint, one TimeTrack episode at a long
delay (as the counter view plays it): whether its events and phase bits are exactly 0 or 1 at every
step, whether its count is the time left, +-(T - t - 1), at every step, and the fraction of steps each
event is on.

    python scripts/learned_count_exactness.py runs/learned-count-timetrack/*/checkpoint.pt [--delay 1000]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nalu_rl.checkpoint import load_agent
from nalu_rl.state_probe import record_state_traces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--delay", type=int, default=1000)
    arguments = parser.parse_args(argv)
    for path in arguments.checkpoints:
        model, config = load_agent(path)
        (trace,) = record_state_traces(model, config, [arguments.delay], episodes=1)
        bits = np.concatenate([trace.views["learned_events"], trace.views["learned_phase"]], axis=1)
        count = trace.views["learned_count"][:, 0]
        left = trace.time_left() - 1.0  # T - t - 1 on TimeTrack
        exact = np.array_equal(count, left) or np.array_equal(count, -left)
        on = trace.views["learned_events"].mean(0).round(3).tolist()
        print(
            f"{path}: {trace.steps} steps, {trace.outcome}; events and phase exactly 0/1: "
            f"{bool(np.isin(bits, (0.0, 1.0)).all())}; count = +-(T - t - 1) at every step: {exact}; "
            f"fraction of steps each event is on: {on}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
