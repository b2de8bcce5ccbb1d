"""Makes docs/POPGYM.md, "The counting agent on all three: count-mixture".

Which count a trained `count-mixture` answers with on Count Recall: for each asked value, the weight
its mixture gives to the count of the dealt cards of that value (the exact answer; mean and least over
the dealt values), to its own head's policy, and to the count it weighs most; the scale of its
count-as-answer term; and the mean return of greedy play:

    python scripts/experiments/probe_count_mixture.py runs/popgym/count-mixture-CountRecallHard-seed0 \
        popgym-CountRecallHard-v0 --episodes 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # probe_value_count, for its greedy play

from probe_value_count import greedy_return  # noqa: E402

from nalu_rl.checkpoint import load_agent  # noqa: E402


def mixture_weights(model: torch.nn.Module, dealt: int, asked: int) -> torch.Tensor:
    """The mixture's weights [1 + K] for the observation (dealt, asked): the head's, then each count's."""
    key = model.observation_keys[0]
    features = model.encoder(model.observation_transforms[key](torch.tensor([[dealt, asked]])))
    return model.count_mixture.weights(features)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].replace("\n", " "))
    parser.add_argument("run", help="run folder or checkpoint of a count-mixture agent")
    parser.add_argument("env_id", help="the Count Recall task, e.g. popgym-CountRecallHard-v0")
    parser.add_argument("--episodes", type=int, default=5, help="greedy episodes (default 5)")
    arguments = parser.parse_args()
    import popgym  # noqa: F401  (registers the tasks)

    model, _ = load_agent(arguments.run, allowed_imports=["popgym"], trust_imports=True)
    values = int(gymnasium.make(arguments.env_id).observation_space.nvec[0])
    scale = model.count_mixture.count_as_action.scale.item()
    print(f"{arguments.run}: count-as-answer scale {scale:.2f}")
    with torch.no_grad():
        for asked in range(values):
            # Count 1 + v of the mixture is the count of the dealt cards of value v (the features
            # begin with the dealt card's one-hot code).
            weights = torch.stack([mixture_weights(model, dealt, asked) for dealt in range(values)])
            exact = weights[:, 1 + asked]
            top = int(weights.mean(0)[1:].argmax())
            print(
                f"asked {asked}: the exact count {exact.mean():.3f} (least {exact.min():.3f}), "
                f"the head {weights[:, 0].mean():.3f}, the most weighed count {top} "
                f"({weights.mean(0)[1 + top]:.3f})"
            )
    greedy = greedy_return(model, arguments.env_id, arguments.episodes)
    print(f"greedy return over {arguments.episodes} episodes: {greedy:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
