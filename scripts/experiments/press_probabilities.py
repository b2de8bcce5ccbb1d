"""Makes docs/journal/2026-12-07-count-student-whole-steps.md, "What the students' failures were".

Per step of one episode at a delay, the probability each head of a count-student checkpoint gives
the press (action 1 of a two-action cue task), the policy held to waiting so that the episode runs
past its due step: the teacher (handover 0) and the student (handover 1), with the student's count
at each step. Shows whether a student with an exact count presses early or late because its readout
of the count is soft. With --episodes N, also the outcomes of N episodes the student plays (actions
sampled) and how far from the due step those that failed ended.

    cd scripts/experiments
    python press_probabilities.py RUN/checkpoint.pt --import count_student_variants --delay 8
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
import torch
from evaluate_heads import load_taught_agent
from probe_event_counter import play

from nalu_rl.cli import run_cli
from nalu_rl.environment import observation_dict
from nalu_rl.evaluation import timing_environment

PRESS = 1


def press_probabilities(model: torch.nn.Module, config: dict, delay: int, seed: int) -> dict[str, list]:
    """Per step (waiting throughout), the press probability of each head and the student's count."""
    rows: dict[str, list] = {"teacher": [], "student": [], "count": []}
    for head, handover in (("teacher", 0.0), ("student", 1.0)):
        model.student.handover.fill_(handover)
        with timing_environment(config) as environment:
            env = environment.make_vector(1, delay_range=(delay, delay))
            due = environment.due_time(delay)
            observation = observation_dict(env.reset(seed=seed)[0])
            state = model.initial_state(1)
            start = torch.ones(1, 1, dtype=torch.bool)
            for _ in range(int(due) + 3):
                inputs = {name: torch.from_numpy(np.asarray(x))[None] for name, x in observation.items()}
                logits, _, state = model(inputs, start, state)
                start = torch.zeros_like(start)
                rows[head].append(torch.softmax(logits[0, 0].float(), -1)[PRESS].item())
                if head == "student":
                    rows["count"].append(float(model.describe_state(state)["event_count"][0, 0]))
                observation, _, terminated, truncated, _ = env.step(np.zeros(1, dtype=np.int64))
                observation = observation_dict(observation)
                if terminated[0] or truncated[0]:
                    break
            env.close()
    rows["due"] = [int(due)]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    parser.add_argument("checkpoint")
    parser.add_argument(
        "--import", dest="imports", nargs="*", default=[], help="modules registering the agent"
    )
    parser.add_argument("--delay", type=int, default=8)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--around", type=int, default=3, help="steps shown on each side of the due step")
    parser.add_argument("--episodes", type=int, default=0, help="also tally N episodes the student plays")
    args = parser.parse_args(argv)
    model, config = load_taught_agent(args.checkpoint, args.imports)
    rows = press_probabilities(model.eval(), config, args.delay, args.seed)
    due = rows["due"][0]
    print(f"{args.checkpoint}, T = {args.delay}, press due at step {due}")
    print("| step | student's count | teacher's press probability | student's |")
    print("|---|---|---|---|")
    for step in range(max(0, due - args.around), min(len(rows["student"]), due + args.around + 1)):
        teacher, student = rows["teacher"][step], rows["student"][step]
        print(f"| {step} | {rows['count'][step]:g} | {teacher:.2g} | {student:.2g} |")
    if args.episodes > 0:
        model.student.handover.fill_(1.0)
        records = play(model, config, args.delay, args.episodes, args.seed)
        ended = [record for record in records if record["end"] is not None]
        ends = Counter((record["outcome"], record["end"] - record["due"]) for record in ended)
        tally = ", ".join(f"{outcome} at {offset:+d}: {n}" for (outcome, offset), n in sorted(ends.items()))
        print(f"\nthe student's {args.episodes} episodes (outcome at end step - due step: episodes): {tally}")


if __name__ == "__main__":
    with torch.no_grad():
        run_cli(main)
