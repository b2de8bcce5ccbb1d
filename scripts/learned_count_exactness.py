"""Is a `learned-count` checkpoint's count exact? For each checkpoint, one episode of its own timing task
at a long delay (as the counter view plays it): whether its events and phase bits are exactly 0 or 1
at every step, whether through the final wait (the last T steps before the due time: all of a
TimeTrack episode, the dark half of an IntervalTiming one) its count is exactly c times the time left
less one, c * (due - t - 1), with c = +-1 or +-1/2, and the fraction of steps each event is on.

    python scripts/learned_count_exactness.py runs/learned-count-timetrack/*/checkpoint.pt [--delay 1000]
        [--episodes 1]

With --episodes N it plays N episodes (seeds as the evaluation's) and checks the count in each that
lasted through the wait (an IntervalTiming agent may step onto the target in the light, ending it).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nalu_rl.checkpoint import load_agent
from nalu_rl.state_probe import record_state_traces

EXACT_SCALES = (1.0, -1.0, 0.5, -0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=1)
    arguments = parser.parse_args(argv)
    for path in arguments.checkpoints:
        model, config = load_agent(path)
        traces = record_state_traces(model, config, [arguments.delay], episodes=arguments.episodes)
        lasted = [trace for trace in traces if trace.steps >= trace.due]  # played through the wait
        exact_scales = [exact_scale(trace) for trace in lasted]
        bits = np.concatenate(
            [trace.views[view] for trace in traces for view in ("event_bits", "event_phase")], axis=None
        )
        on = np.concatenate([trace.views["event_bits"] for trace in traces]).mean(0).round(3).tolist()
        scales = ", ".join(sorted({f"{scale:g}" for scale in exact_scales if scale is not None}))
        print(
            f"{path}: {config.get('env_id', 'nalu_rl/TimeTrack-v0')}, T = {arguments.delay}, "
            f"{len(traces)} episode(s), outcomes {sorted({trace.outcome for trace in traces})}; "
            f"events and phase exactly 0/1: {bool(np.isin(bits, (0.0, 1.0)).all())}; "
            f"count = c * (due - t - 1) through the final wait in "
            f"{sum(scale is not None for scale in exact_scales)} of the {len(lasted)} episode(s) that lasted"
            f"{f' (c = {scales})' if scales else ''}; fraction of steps each event is on: {on}"
        )
    return 0


def exact_scale(trace) -> float | None:
    """c where the count is exactly c * (due - t - 1) over the last T steps before the due time."""
    wait = slice(trace.due - trace.delay, trace.due)
    count = trace.views["event_count"][wait, 0]
    left = trace.time_left()[wait] - 1.0
    return next((scale for scale in EXACT_SCALES if np.array_equal(count, scale * left)), None)


if __name__ == "__main__":
    sys.exit(main())
