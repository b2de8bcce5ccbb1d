"""Is a `learned-count` checkpoint's count exact? For each checkpoint, one episode of its own timing task
at a long delay (as the counter view plays it): whether its events and phase bits are exactly 0 or 1
at every step, whether through the final wait (the last T steps before the due time: all of a
TimeTrack episode, the dark half of an IntervalTiming one) its count is exactly c times the time left
less one, c * (due - t - 1), with c = +-1 or +-1/2, and the fraction of steps each event is on.

    python scripts/learned_count_exactness.py runs/learned-count-timetrack/*/checkpoint.pt [--delay 1000]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nalu_rl.checkpoint import load_agent
from nalu_rl.state_probe import record_state_traces

EXACT_SCALES = (1.0, -1.0, 0.5, -0.5)


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
        wait = slice(trace.due - trace.delay, trace.due)  # the last T steps before the due time
        left = trace.time_left()[wait] - 1.0
        lasted = trace.steps >= trace.due  # played through the wait, not ended before
        scales = [scale for scale in EXACT_SCALES if lasted and np.array_equal(count[wait], scale * left)]
        on = trace.views["learned_events"].mean(0).round(3).tolist()
        print(
            f"{path}: {config.get('env_id', 'nalu_rl/TimeTrack-v0')}, T = {trace.delay}, "
            f"{trace.steps} steps, {trace.outcome}; "
            f"events and phase exactly 0/1: {bool(np.isin(bits, (0.0, 1.0)).all())}; "
            f"count = c * (due - t - 1) through the final wait: "
            f"{f'yes, c = {scales[0]:g}' if scales else 'no'}; fraction of steps each event is on: {on}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
