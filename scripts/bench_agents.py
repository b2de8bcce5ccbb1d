"""Parameter count, inference time and forward/backward time per sample of every agent core.

Prints a Markdown table, one row per agent and observation mode:
  params        number of trainable parameters
  act us/obs    one-step acting (T = 1) at --act-batch, no gradient, per observation
  train us/sample  forward + V-trace targets + A3C loss + backward on a [--unroll, --train-batch]
                   rollout, per sample (one step of one env)
Run pinned to one core, e.g. `taskset -c 0 python scripts/bench_agents.py`; by default torch uses
one thread, as the runtime's actors do.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from gymnasium import spaces

from nalu_rl.agents import actor_critic_loss, agent_names, make_agent, vtrace
from nalu_rl.agents.losses import action_log_probs

MAX_DELAY = 1000


def observation_space(mode: str, size: int = 5) -> spaces.Dict:
    """The TimeTrack observation space for "pixels" (56x56x3) or "symbolic" (2 x size x size)."""
    stimulus = spaces.Box(0, MAX_DELAY, (1,), np.float32)
    if mode == "pixels":
        image = (size + 2) * 8
        return spaces.Dict({"pixels": spaces.Box(0, 255, (image, image, 3), np.uint8), "stimulus": stimulus})
    return spaces.Dict({"grid": spaces.Box(0, 1, (2, size, size), np.uint8), "stimulus": stimulus})


def random_batch(space: spaces.Dict, steps: int, batch: int) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Random observations [steps, batch, ...] and an episode-start mask with starts every ~10 steps."""
    obs = {}
    for key, subspace in space.spaces.items():
        high = 41 if key == "stimulus" else int(subspace.high.max()) + 1
        obs[key] = torch.randint(0, high, (steps, batch, *subspace.shape)).to(
            torch.float32 if key == "stimulus" else torch.uint8
        )
    return obs, torch.rand(steps, batch) < 0.1


def best_seconds(function, repeats: int) -> float:
    """The fastest of `repeats` timed calls (after one warm-up call)."""
    function()
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return min(timings)


def bench(name: str, mode: str, args: argparse.Namespace) -> dict[str, float]:
    """Parameter count and timings of one agent in one observation mode."""
    space = observation_space(mode)
    model = make_agent(name, space)
    parameters = sum(parameter.numel() for parameter in model.parameters())

    act_obs, act_starts = random_batch(space, 1, args.act_batch)
    act_state = model.initial_state(args.act_batch)

    def act() -> None:
        with torch.no_grad():
            model(act_obs, act_starts, act_state)

    steps, batch = args.unroll, args.train_batch
    obs, starts = random_batch(space, steps + 1, batch)
    actions = torch.randint(0, model.num_actions, (steps, batch))
    rewards = torch.randn(steps, batch)
    discounts = 0.99 * (torch.rand(steps, batch) > 0.1).float()
    behaviour_log_probs = torch.log(torch.full((steps, batch), 0.2))
    mask = torch.ones(steps, batch)
    state = model.initial_state(batch)

    def train() -> None:
        model.zero_grad(set_to_none=True)
        logits, values, _ = model(obs, starts, state)
        target_log_probs = action_log_probs(logits[:steps], actions).detach()
        targets = vtrace(
            behaviour_log_probs,
            target_log_probs,
            rewards,
            discounts,
            values[:steps].detach(),
            values[steps].detach(),
        )
        terms = actor_critic_loss(
            logits[:steps], actions, values[:steps], targets.vs, targets.pg_advantages, mask
        )
        (terms.total + model.regularizer()).backward()

    act_seconds = best_seconds(act, args.repeats)
    train_seconds = best_seconds(train, args.repeats)
    return {
        "params": parameters,
        "act_us": 1e6 * act_seconds / args.act_batch,
        "train_us": 1e6 * train_seconds / (steps * batch),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--agents", nargs="+", default=list(agent_names()), choices=agent_names(), help="agents to time"
    )
    parser.add_argument("--obs", nargs="+", default=["pixels", "symbolic"], choices=["pixels", "symbolic"])
    parser.add_argument("--act-batch", type=int, default=128, help="batch of one-step acting")
    parser.add_argument("--unroll", type=int, default=20, help="unroll length T of a training batch")
    parser.add_argument("--train-batch", type=int, default=32, help="envs B of a training batch")
    parser.add_argument("--repeats", type=int, default=20, help="timed repetitions (the best is kept)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    print(
        f"torch {torch.__version__}, {args.threads} thread(s); acting batch {args.act_batch}; "
        f"training batch [T={args.unroll}, B={args.train_batch}]; best of {args.repeats}"
    )
    print()
    print("| agent | obs | params | act us/obs | act obs/s | train us/sample | train samples/s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in args.obs:
        for name in args.agents:
            result = bench(name, mode, args)
            act_rate, train_rate = 1e6 / result["act_us"], 1e6 / result["train_us"]
            print(
                f"| {name} | {mode} | {result['params']:,} | {result['act_us']:.1f} | {act_rate:,.0f} | "
                f"{result['train_us']:.1f} | {train_rate:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
