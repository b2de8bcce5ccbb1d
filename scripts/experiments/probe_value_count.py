"""Makes docs/POPGYM.md, "The counting agent on Medium and Hard".

What a trained `value-count` (or a variant of scripts/experiments/value_count_variants.py) counts on
Count Recall: the slot each dealt value's event falls in, the reads each asked value opens (mean over
the dealt values; reads above 0.05 listed), the scale of its count-as-action term, and the mean
return of greedy play:

    python scripts/experiments/probe_value_count.py runs/popgym/value-count-CountRecallMedium-seed0 \
        popgym-CountRecallMedium-v0 --episodes 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # value_count_variants, for its agents

from nalu_rl.checkpoint import load_agent  # noqa: E402


def greedy_return(model: torch.nn.Module, env_id: str, episodes: int) -> float:
    """The mean return of `episodes` episodes played by the argmax of the policy (seeds 0, 1, ...)."""
    env = gymnasium.make(env_id)
    key = model.observation_keys[0]
    total = 0.0
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        state, start, done = model.initial_state(1), torch.ones(1, 1, dtype=torch.bool), False
        while not done:
            with torch.no_grad():
                logits, _, state = model({key: torch.as_tensor(np.asarray(obs))[None, None]}, start, state)
            obs, reward, terminated, truncated, _ = env.step(int(logits[0, 0].argmax()))
            total += float(reward)
            done = terminated or truncated
            start = torch.zeros(1, 1, dtype=torch.bool)
    return total / episodes


def gates(model: torch.nn.Module, dealt: int, asked: int) -> tuple[int, torch.Tensor]:
    """The event slot and the snapped reads of the observation (dealt, asked)."""
    core = model.cores["count"]
    key = model.observation_keys[0]
    observation = torch.tensor([[[dealt, asked]]])
    features = model.encoder(model.observation_transforms[key](observation))
    prepared = core.prepare({"encoder": features}).squeeze()
    counted = getattr(core, "input_features", 0)  # the variants' counts of the input features
    events = getattr(core, "events", core.state_size)
    _, event_logits, read_logits = prepared.split([counted, events, core.state_size])
    return counted + int(event_logits.argmax()), core.read_snap(torch.sigmoid(read_logits))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].replace("\n", " "))
    parser.add_argument("run", help="run folder or checkpoint of a value-count agent")
    parser.add_argument("env_id", help="the Count Recall task, e.g. popgym-CountRecallMedium-v0")
    parser.add_argument("--episodes", type=int, default=5, help="greedy episodes (default 5)")
    arguments = parser.parse_args()
    import popgym  # noqa: F401  (registers the tasks)

    model, _ = load_agent(
        arguments.run, allowed_imports=["popgym", "value_count_variants"], trust_imports=True
    )
    values = int(gymnasium.make(arguments.env_id).observation_space.nvec[0])
    print(f"{arguments.run}: count-as-action scale {float(model.count_as_action.scale):.2f}")
    with torch.no_grad():
        for dealt in range(values):
            slots = sorted({gates(model, dealt, asked)[0] for asked in range(values)})
            print(f"dealt {dealt}: event slot(s) {slots} (over every asked value)")
        for asked in range(values):
            read = torch.stack([gates(model, dealt, asked)[1] for dealt in range(values)]).mean(0)
            opened = ", ".join(
                f"{slot}: {value:.2f}" for slot, value in enumerate(read.tolist()) if value > 0.05
            )
            print(f"asked {asked}: reads {opened or 'none above 0.05'}")
    played = greedy_return(model, arguments.env_id, arguments.episodes)
    print(f"greedy mean return over {arguments.episodes} episodes: {played:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
