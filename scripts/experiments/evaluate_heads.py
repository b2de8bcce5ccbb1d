"""Makes docs/journal/2026-12-07-count-student.md, "2026-12-07: a count taught by the LSTM's head".

Success by delay of a `teacher_inputs` agent (`nalu_rl.agents.count_student`) acting with each head
alone: the teacher (handover 0) and the student, the actor head on the count (handover 1). Writes
OUT/success_by_delay-teacher.csv and OUT/success_by_delay-student.csv and prints both:

    cd scripts/experiments && python evaluate_heads.py RUN/checkpoint.pt --import count_student_variants \
        --delays 5-12,13,20,50,100,200,500,1000 --episodes 100 --seed 1 --out RUN/heads
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import torch

from nalu_rl.checkpoint import load_agent
from nalu_rl.cli import parse_delays, run_cli
from nalu_rl.errors import InputError
from nalu_rl.evaluation import success_by_delay, write_success_csv


def load_taught_agent(checkpoint: str, imports: list[str]) -> tuple[torch.nn.Module, dict]:
    """The model and config of a checkpoint of an agent with a teacher head, after importing the
    modules that register it; an InputError for an agent without one."""
    for module in imports:
        importlib.import_module(module)
    model, config = load_agent(checkpoint, allowed_imports=imports)
    if model.student is None:
        raise InputError(f"{checkpoint}: the agent has no teacher head")
    return model, config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    parser.add_argument("checkpoint")
    parser.add_argument(
        "--import", dest="imports", nargs="*", default=[], help="modules registering the agent"
    )
    parser.add_argument("--delays", default="5-12,13,20,50,100,200,500,1000")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    model, config = load_taught_agent(args.checkpoint, args.imports)
    print(f"{args.checkpoint}: handover as trained {float(model.student.handover):.3f}")
    delays = parse_delays(args.delays)
    for head, handover in (("teacher", 0.0), ("student", 1.0)):
        model.student.handover.fill_(handover)
        results = success_by_delay(model, config, delays, args.episodes, args.seed, label=head)
        write_success_csv(results, Path(args.out) / f"success_by_delay-{head}.csv")
        print(head, " ".join(f"T={row.delay}:{row.successes / row.episodes:.2f}" for row in results))


if __name__ == "__main__":
    with torch.no_grad():
        run_cli(main)
