"""Makes docs/journal/2026-12-03-results.md, "What changed in the code".

Fraction of freshly built agents whose NAU counter starts with a weight exactly at +-1.

A weight at +-1 sits where the NAU's sparsity regulariser is already zero, committed to a vertex
before training. Prints the fraction over N builds (seeds 0..N-1) of the given agent:
    python scripts/experiments/nau_init_vertex.py [--agent nau-scalar-count] [--builds 1000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gymnasium  # noqa: E402
import torch  # noqa: E402

import nalu_rl.envs  # noqa: E402, F401  (registers the environment)
from nalu_rl.agents import make_agent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="nau-scalar-count")
    parser.add_argument("--builds", type=int, default=1000)
    args = parser.parse_args()
    space = gymnasium.make("nalu_rl/TimeTrack-v0", obs_mode="symbolic").observation_space
    at_vertex, largest = 0, 0.0
    for seed in range(args.builds):
        torch.manual_seed(seed)
        weight = make_agent(args.agent, space).cores["count"].counter_unit.weight.detach()
        at_vertex += bool((weight.abs() >= 1).any())
        largest = max(largest, float(weight.abs().max()))
    print(
        f"{args.agent}: {at_vertex}/{args.builds} builds ({at_vertex / args.builds:.3f}) start with a "
        f"weight at +-1; largest |w| at start {largest:.3f}"
    )


if __name__ == "__main__":
    main()
