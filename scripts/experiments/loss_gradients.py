"""Makes docs/TRAINING.md, "Why these defaults: what kept other envs from learning".

How much of an update's gradient is the policy's and how much the value's, on fresh batches of an
untrained agent: the norm of each term's gradient, with and without return normalisation.

    PYTHONPATH=tests python scripts/experiments/loss_gradients.py --env-id CartPole-v1 [train options ...]

Plays `--batches` batches in one process with the run's (untrained) policy, folding each into the
return statistics, and prints for the last one the gradient norm of the policy term, of the value
term (times --value-coef) and of the entropy term, before any clipping.
"""

from __future__ import annotations

import argparse
import sys

import torch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10, help="batches played before the one measured")
    args, train_argv = parser.parse_known_args(argv)
    from nalu_rl.agents.losses import action_log_probs, actor_critic_loss, normalize_advantages
    from nalu_rl.config import parse_config
    from nalu_rl.runtime.actor import Actor, build_policy
    from nalu_rl.runtime.normalization import RewardNormalizer
    from nalu_rl.runtime.rollout import RolloutBuffers
    from nalu_rl.runtime.update import batch_targets

    config, _ = parse_config([*train_argv, "--actors", "0", "--precision", "fp32"])
    torch.manual_seed(config.seed)
    from nalu_rl.agents import agent_wiring

    model = build_policy(config, agent_wiring(config.agent))
    buffers = RolloutBuffers(
        model.observation_space,
        model.initial_state(config.envs_per_actor),
        config.unroll_length,
        config.envs_per_actor,
        1,
        shared=False,
    )
    actor = Actor(config, model, config.envs_per_actor, config.seed)
    normalizer = RewardNormalizer()
    for _ in range(args.batches + 1):
        actor.unroll(buffers.slot(0))
        batch = buffers.batch([0])
        normalizer.update(batch.discounted_return[~batch.ignored])
    print(f"{config.env_id}, {config.agent}, untrained, batch {args.batches + 1} of {batch.num_steps} steps")
    print(f"{'rewards':<12} {'policy':>8} {'value':>8} {'entropy':>8}  (gradient norms of each term)")
    for label, rewards in (("raw", batch.rewards), ("normalised", normalizer.normalize(batch.rewards))):
        scaled = batch.__class__(**{**batch.__dict__, "rewards": rewards})
        logits, values, _ = model(scaled.obs, scaled.episode_start, scaled.initial_state)
        length = scaled.actions.shape[0]
        logits = logits[:length]
        log_probs = action_log_probs(logits, scaled.actions, model.num_actions)
        targets = batch_targets(config, scaled, values, log_probs)
        mask = (~scaled.ignored).float()
        advantages = targets.advantages
        if config.advantage_norm:
            advantages = normalize_advantages(advantages, mask)
        # The A3C loss as the learner computes it (nalu_rl/runtime/update.py, compute_loss), each term
        # with the weight it enters the total with.
        loss = actor_critic_loss(
            logits,
            scaled.actions,
            values[:length],
            targets.value_targets,
            advantages,
            mask,
            value_coef=config.value_coef,
            entropy_coef=config.entropy_coef,
            action_sizes=model.num_actions,
        )
        terms = {
            "policy": loss.policy,
            "value": config.value_coef * loss.value,
            "entropy": config.entropy_coef * loss.entropy,
        }
        norms = []
        for term in terms.values():
            gradients = torch.autograd.grad(
                term, list(model.parameters()), retain_graph=True, allow_unused=True
            )
            norms.append(
                float(
                    torch.sqrt(sum((g.square().sum() for g in gradients if g is not None), torch.tensor(0.0)))
                )
            )
        print(f"{label:<12} {norms[0]:8.3f} {norms[1]:8.3f} {norms[2]:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
