"""Makes docs/RESULTS.md, "MemoryS11: not learned in 1M steps (3 seeds)".

How often MiniGrid's Memory task shows its cue in the agent's first view.

The agent starts at a random place of the start room and hallway, facing the hallway's end; the cue,
the object in the start room, is behind it unless it starts beside it. For each start column, over
RESETS resets (seeds 0..RESETS-1), the number of episodes and the fraction whose first view holds the
cue (`minigrid_probes.sees_cue`: MiniGrid's own `agent_sees` of the cue's cell).

    pip install -e ".[minigrid]"
    python scripts/experiments/minigrid_cue_in_view.py [--env-id minigrid_memory/MemoryS7-v0] [--resets 400]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import gymnasium
import numpy as np


def fail(message: str) -> None:
    """A one-line error on stderr and exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--env-id", default="minigrid_memory/MemoryS7-v0", help="a Memory id of examples/minigrid_memory.py"
    )
    parser.add_argument("--resets", type=int, default=400, help="resets, seeds 0 to RESETS - 1")
    arguments = parser.parse_args()
    if arguments.resets < 1:
        parser.error("--resets must be >= 1")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        from minigrid_probes import sees_cue  # (its import registers minigrid_memory/*)
    except ImportError as error:
        fail(f"{error}; install MiniGrid with pip install -e '.[minigrid]'")
    try:
        env = gymnasium.make(arguments.env_id)
    except gymnasium.error.Error as error:
        fail(str(error))
    by_column: dict[int, list[bool]] = defaultdict(list)
    for seed in range(arguments.resets):
        env.reset(seed=seed)
        by_column[int(env.unwrapped.agent_pos[0])].append(sees_cue(env.unwrapped))
    print("| start column | episodes | cue in the first view |")
    print("|---|---|---|")
    for column, seen in sorted(by_column.items()):
        print(f"| {column} | {len(seen)} | {np.mean(seen):.2f} |")
    total = sum(sum(seen) for seen in by_column.values())
    print(f"cue in the first view in {total} of {arguments.resets} resets")


if __name__ == "__main__":
    main()
