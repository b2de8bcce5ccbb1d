"""How a checkpoint's episodes end at each delay T: the counts of each outcome (success, early, late,
timeout, as its timing task reports them), with actions sampled from the policy as the evaluation
protocol plays them, and with the greedy (argmax) action. A policy that succeeds greedily but not
sampled loses its episodes to the spread of its action distribution, not to what it knows.

    python scripts/outcomes_by_delay.py (--agent NAME | --checkpoint PATH) [--delays 5-12,13,20,100]
        [--episodes 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys

from nalu_rl.checkpoint import load_agent, shipped_checkpoint
from nalu_rl.cli import parse_delays
from nalu_rl.evaluation import success_by_delay


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--agent", help="a shipped checkpoint's name")
    source.add_argument("--checkpoint", help="a checkpoint file")
    parser.add_argument("--delays", default="5-12,13,20,100")
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    path = shipped_checkpoint(arguments.agent) if arguments.agent else arguments.checkpoint
    model, config = load_agent(path)
    delays = parse_delays(arguments.delays)
    print(f"{path}: {arguments.episodes} episodes per T, seed {arguments.seed}")
    print("| actions | T | success rate | outcomes |")
    print("|---|---|---|---|")
    for greedy in (False, True):
        results = success_by_delay(
            model, config, delays, episodes=arguments.episodes, seed=arguments.seed, greedy=greedy
        )
        for result in results:
            outcomes = ", ".join(f"{name} {count}" for name, count in sorted(result.outcomes.items()))
            mode = "greedy" if greedy else "sampled"
            print(f"| {mode} | {result.delay} | {result.success_rate:.3f} | {outcomes} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
