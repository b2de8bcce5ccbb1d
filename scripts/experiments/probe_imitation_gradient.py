"""Makes docs/journal/2026-12-07-count-student-tasks.md, "The imitation's gradient on the two intervals".

Where the imitation loss pushes a count student's count on IntervalDiscrimination: for episodes of
each delay (the policy waits to the third flash, where the answer is due), the gradient of the
imitation loss KL(teacher || student), summed over every step of the whole episode (no truncation),
with respect to what the count adds at each step of the first interval and of the second. The count
is cumulative, so the gradient on the increment at step s is the sum of the gradients on the count
as the actor read it (clamped) at every step from s on. Per delay and per order of the intervals
(first longer, second longer, both): the mean over episodes of the first interval's and the
second's gradient; then at how many delays the two means over both orders share a sign, and how far
apart they are as a share of their mean size. An answer from A - B needs them to move apart (one
up, one down, each sign flipping with the order); what moves them alike cannot tell the orders apart.

    cd scripts/experiments
    python probe_imitation_gradient.py RUN/best.pt --import count_student_variants --delays 5 8 12
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np
import torch

from nalu_rl.checkpoint import load_agent
from nalu_rl.environment import observation_dict
from nalu_rl.errors import InputError
from nalu_rl.evaluation import delay_seeds, timing_environment


def episode_frames(config: dict, delay: int, episodes: int, seed: int) -> tuple[dict, int]:
    """The observations [T, B, ...] of `episodes` episodes at `delay`, waiting from the first step to
    the third flash (T = the due time + 1), and that due time."""
    with timing_environment(config) as environment:
        env = environment.make_vector(episodes, delay_range=(delay, delay))
        due = environment.due_time(delay)
    observation = observation_dict(env.reset(seed=delay_seeds(seed, delay)[0])[0])
    frames = []
    for t in range(due + 1):
        frames.append({key: np.asarray(value).copy() for key, value in observation.items()})
        if t < due:
            observation = observation_dict(env.step(np.zeros(episodes, dtype=np.int64))[0])
    env.close()
    stacked = {key: torch.from_numpy(np.stack([frame[key] for frame in frames])) for key in frames[0]}
    return stacked, due


def interval_gradients(
    model: torch.nn.Module, frames: dict, due: int, answer_only: bool
) -> tuple[np.ndarray, ...]:
    """Per episode: the imitation loss's gradient (its sum over the steps, or at the answer step
    alone) on the first interval's increments and on the second's (summed over each interval's
    steps), and whether the first interval is the longer."""
    if "cues" not in frames:
        raise InputError("the task's observation has no 'cues' entry: not a cue task")
    flashes = frames["cues"][..., 0].numpy() > 0  # [T, B]
    steps, episodes = flashes.shape
    second_flash = np.array([np.flatnonzero(flashes[:, row])[1] for row in range(episodes)])
    captured = {}
    hook = model.actor.register_forward_pre_hook(lambda module, inputs: captured.update(x=inputs[0]))
    try:
        starts = torch.zeros(steps, episodes, dtype=torch.bool)
        starts[0] = True
        model.train(False)
        with torch.enable_grad():
            model(frames, starts, model.initial_state(episodes))
            actor_input = captured["x"]
            actor_input.retain_grad()
            mask = torch.zeros(steps, episodes) if answer_only else torch.ones(steps, episodes)
            mask[due] = 1.0
            loss = model.auxiliary_loss(mask)
            loss.backward()
    finally:
        hook.remove()
    if model.wiring.actor_inputs[-1] != "count":
        raise InputError("the probe reads the count as the actor's last input; this actor reads it elsewhere")
    count_column = actor_input.shape[-1] - model.cores["count"].output_size  # m_t, then events and phase
    # The masked mean's gradient, times the steps it averaged over: the gradient of the sum.
    on_count = actor_input.grad[..., count_column].double().numpy() * float(mask.sum())
    # The gradient on the increment at step s: the gradients on the count read at steps s..T-1.
    on_increment = np.flip(np.cumsum(np.flip(on_count, 0), 0), 0)
    first = np.array([on_increment[1 : second_flash[row], row].sum() for row in range(episodes)])
    second = np.array([on_increment[second_flash[row] : due, row].sum() for row in range(episodes)])
    first_longer = second_flash > (due - second_flash)
    return first, second, first_longer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("checkpoint", type=Path, help="a count student's checkpoint (IntervalDiscrimination)")
    parser.add_argument("--import", dest="imports", nargs="*", default=[], help="modules registering it")
    parser.add_argument(
        "--answer-only", action="store_true", help="the loss at the answer step alone, not at every step"
    )
    parser.add_argument("--delays", type=int, nargs="+", default=[5, 8, 12])
    parser.add_argument("--episodes", type=int, default=200, help="episodes per delay")
    parser.add_argument("--seed", type=int, default=100_000)
    args = parser.parse_args(argv)
    try:
        for module in args.imports:
            importlib.import_module(module)
        model, config = load_agent(args.checkpoint, allowed_imports=args.imports)
        if getattr(model, "student", None) is None:
            raise InputError("the checkpoint's agent has no teacher (Wiring.teacher_inputs)")
        where = "at the answer step" if args.answer_only else "summed over the steps"
        print(f"{args.checkpoint}: the imitation loss's gradient ({where}) on each interval's increments")
        print("| T | order | episodes | first interval | second interval |")
        print("|---|---|---|---|---|")
        summary = []
        for delay in args.delays:
            frames, due = episode_frames(config, delay, args.episodes, args.seed)
            first, second, first_longer = interval_gradients(model, frames, due, args.answer_only)
            orders = (("first longer", first_longer), ("second longer", ~first_longer))
            orders += (("both", np.ones_like(first_longer)),)
            for name, rows in orders:
                print(
                    f"| {delay} | {name} | {int(rows.sum())} | {first[rows].mean():+.4f} | "
                    f"{second[rows].mean():+.4f} |"
                )
            both = (first.mean(), second.mean())
            apart = abs(both[0] - both[1]) / max(abs(both[0]) + abs(both[1]), 1e-12) * 2
            summary.append((delay, np.sign(both[0]) == np.sign(both[1]), apart))
        alike = sum(same for _, same, _ in summary)
        print(
            f"\nOver both orders the two intervals' gradients have the same sign at {alike} of "
            f"{len(summary)} delays; they differ by {min(a for *_, a in summary):.2f}-"
            f"{max(a for *_, a in summary):.2f} of their mean size."
        )
    except (InputError, OSError, KeyError, ModuleNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
