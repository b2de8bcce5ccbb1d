"""The update: what the learner does with a rollout batch, the A3C or PPO loss and the guarded step.

Every runtime feeds it: the learner runtime (`runtime/learner.py`) and the device runtime
(`runtime/device.py`) call `Learner.update` on their batches; hogwild workers (`runtime/hogwild.py`)
call `compute_loss` and `guarded_update` on their own unrolls. The loss functions themselves (V-trace,
GAE, the A3C and PPO losses) are `nalu_rl.agents.losses`'.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from nalu_rl import regularizer_scale
from nalu_rl.agents.losses import (
    action_log_probs,
    actor_critic_loss,
    gae_advantages,
    masked_mean,
    masked_std,
    normalize_advantages,
    ppo_loss,
    vtrace,
)
from nalu_rl.precision import autocast
from nalu_rl.runtime.normalization import RewardNormalizer
from nalu_rl.runtime.rollout import RolloutBatch
from nalu_rl.units import clamp_unit_weights_


class BatchTargets(NamedTuple):
    """What the update of a batch learns towards, fixed once per batch ([T, N] each): the values of
    the policy before the update, the value targets and the advantages (not normalised)."""

    values: torch.Tensor
    value_targets: torch.Tensor
    advantages: torch.Tensor

    def columns(self, envs: torch.Tensor) -> BatchTargets:
        """The targets of the env columns `envs` (as `RolloutBatch.columns`)."""
        return BatchTargets(*(part.index_select(1, envs.to(part.device)) for part in self))


def ramps(config: Any, steps: int, handover: float | None = None) -> tuple[float, float]:
    """The regulariser's ramp after `steps` of its steps (-1: its gate is closed), 0 to 1 (its share of
    its weight), and a teacher's handover: `handover` where given (an earned handover,
    `runtime.handover`), else the same ramp, or with --handover-steps N one that rises over N steps
    from the regulariser's end step."""
    start, end = config.regularizer_start_steps, config.regularizer_end_steps
    ramp = regularizer_scale(steps, start, end, 1.0)
    if handover is not None:
        return ramp, handover
    if not config.handover_steps:
        return ramp, ramp
    return ramp, regularizer_scale(steps, end, end + config.handover_steps, 1.0)


@torch.no_grad()
def batch_targets(
    config: Any, batch: RolloutBatch, values: torch.Tensor, target_log_probs: torch.Tensor
) -> BatchTargets:
    """Value targets and advantages of `batch` from the model's `values` [T+1, N] (the last one
    bootstraps) and its log-probabilities of the taken actions [T, N]: GAE(lambda) with
    `--value-targets gae`, V-trace (corrected for the acting policy) with `vtrace`."""
    length = batch.actions.shape[0]
    discounts = config.gamma * (~batch.terminated).float()
    values = values.detach()
    if config.value_targets == "gae":
        advantages = gae_advantages(
            batch.rewards, discounts, values[:length], values[length], config.gae_lambda
        )
        return BatchTargets(values[:length], advantages + values[:length], advantages)
    value_targets, advantages = vtrace(
        batch.behaviour_log_probs,
        target_log_probs.detach(),
        batch.rewards,
        discounts,
        values[:length],
        values[length],
        rho_clip=config.rho_clip,
        c_clip=config.c_clip,
    )
    return BatchTargets(values[:length], value_targets, advantages)


def compute_loss(
    model: torch.nn.Module,
    batch: RolloutBatch,
    config: Any,
    steps: int = 0,
    targets: BatchTargets | None = None,
    entropy_coef: float | None = None,
    handover: float | None = None,
) -> tuple[Any, dict[str, float]]:
    """The loss of one batch under `config.algo` (the A3C loss, or PPO's clipped surrogate); returns
    the total loss and its parts as floats.

    The value targets and advantages are `targets` where given (PPO fixes them once per batch), else
    computed from this forward pass (`batch_targets`). The discount is cut where an episode
    terminated, and steps whose action the env ignored (NEXT_STEP autoreset) are masked out of the
    loss. The arithmetic units' regulariser enters with the weight `regularizer_scale` gives it after
    `steps` environment steps; the entropy bonus with the weight `entropy_coef` (by default
    `config.entropy_coef`, the weight at the start of a run); a teacher's handover is `handover`
    where given (`ramps`).
    """
    length = batch.actions.shape[0]
    if entropy_coef is None:
        entropy_coef = config.entropy_coef
    with autocast(config.precision, batch.actions.device):
        logits, values, _ = model(batch.obs, batch.episode_start, batch.initial_state)
    # The loss, the targets, values and log-probabilities in float32 whatever the precision.
    logits, values = logits[:length].float(), values.float()
    target_log_probs = action_log_probs(logits, batch.actions, model.num_actions)
    if targets is None:
        targets = batch_targets(config, batch, values, target_log_probs)
    mask = (~batch.ignored).float()
    advantages = targets.advantages
    if config.advantage_norm:
        advantages = normalize_advantages(advantages, mask)
    # How far the learner's policy has moved from the one that acted (0 when they agree).
    log_ratio = target_log_probs.detach() - batch.behaviour_log_probs
    if config.algo == "ppo":
        terms = ppo_loss(
            logits,
            batch.actions,
            batch.behaviour_log_probs,
            values[:length],
            targets.values,
            targets.value_targets,
            advantages,
            mask,
            clip_coef=config.clip_coef,
            value_clip=config.value_clip,
            value_coef=config.value_coef,
            entropy_coef=entropy_coef,
            action_sizes=model.num_actions,
        )
    else:
        terms = actor_critic_loss(
            logits,
            batch.actions,
            values[:length],
            targets.value_targets,
            advantages,
            mask,
            value_coef=config.value_coef,
            entropy_coef=entropy_coef,
            action_sizes=model.num_actions,
        )
    regularizer = model.regularizer()
    ramp, handover = ramps(config, steps, handover)
    regularizer_weight = config.regularizer_weight * ramp
    auxiliary = model.auxiliary_loss(mask, handover=handover)
    total = terms.total + regularizer_weight * regularizer + auxiliary
    extras = {
        "loss/total": float(total.detach()),
        "loss/policy": float(terms.policy.detach()),
        "loss/value": float(terms.value.detach()),
        "loss/entropy": float(terms.entropy.detach()),
        "loss/regularizer": float(torch.as_tensor(regularizer).detach()),
        "loss/regularizer_weight": regularizer_weight,
        "loss/auxiliary": float(auxiliary.detach()),
        "loss/entropy_coef": entropy_coef,
        "loss/policy_log_ratio": float(masked_mean(log_ratio.abs(), mask)),
        # The scale of the policy gradient's signal before any normalisation, and of the value's targets.
        "loss/advantage_std": float(masked_std(targets.advantages, mask)),
        "loss/value_target_std": float(masked_std(targets.value_targets, mask)),
    }
    if model.student is not None:
        extras["loss/handover"] = float(model.student.handover)
        extras.update(model.student.head_entropies())
    if config.algo == "ppo":
        ratio = log_ratio.detach().exp()
        clipped = ((ratio - 1.0).abs() > config.clip_coef).float()
        extras["loss/clip_fraction"] = float(masked_mean(clipped, mask))
        extras["loss/approx_kl"] = float(masked_mean((ratio - 1.0) - log_ratio.detach(), mask))
    return total, extras


def guarded_update(
    model: torch.nn.Module,
    total_loss: torch.Tensor,
    metrics: dict[str, float],
    max_grad_norm: float,
    apply_gradients: Callable[[], None],
    clip_by_part: bool = False,
) -> dict[str, float] | None:
    """One gradient step, taken only when it is finite: backward through `model`, clip its gradient
    norm to `max_grad_norm` (with `clip_by_part`, each part's gradient to it on its own: see
    `model_parts`), then `apply_gradients()` (the optimizer step). Returns `metrics` with the
    gradient norm and each part's (before clipping), or None when the loss or the gradient was
    NaN/inf (no step taken)."""
    if not math.isfinite(metrics["loss/total"]):
        return None
    model.zero_grad(set_to_none=True)
    total_loss.backward()
    named = [(name, weight) for name, weight in model.named_parameters() if weight.grad is not None]
    # One norm per parameter serves the clip's total and each part's norm.
    norms = [torch.linalg.vector_norm(weight.grad.detach()) for _, weight in named]
    grad_norm = torch.nn.utils.get_total_norm(norms) if norms else torch.zeros(())
    if not torch.isfinite(grad_norm):
        model.zero_grad(set_to_none=True)
        return None
    parts = model_parts([name for name, _ in named])
    part_norms = {
        part: torch.nn.utils.get_total_norm([norms[index] for index in indices])
        for part, indices in parts.items()
    }
    if clip_by_part:
        for part, indices in parts.items():
            weights = [named[index][1] for index in indices]
            torch.nn.utils.clip_grads_with_norm_(weights, max_grad_norm, part_norms[part])
    else:
        torch.nn.utils.clip_grads_with_norm_([weight for _, weight in named], max_grad_norm, grad_norm)
    apply_gradients()
    metrics["loss/grad_norm"] = float(grad_norm)
    if part_norms:
        values = torch.stack(list(part_norms.values())).tolist()
        metrics.update({f"grad_norm/{part}": value for part, value in zip(part_norms, values, strict=True)})
    return metrics


def model_parts(names: list[str]) -> dict[str, list[int]]:
    """The parts of a model, each with the indices of its parameters in `names`: a part is a name's
    first component, or its first two under "cores" and "student" ("cores.count", "student.teacher"),
    so that one can tell where a large update comes from (logged as "grad_norm/<part>")."""
    parts: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        components = name.split(".")
        depth = 2 if components[0] in ("cores", "student") and len(components) > 2 else 1
        parts.setdefault(".".join(components[:depth]), []).append(index)
    return parts


class Learner:
    """Applies the loss of a batch to the model with its optimizer; skips non-finite updates.

    `--algo a3c` takes one gradient step per batch; `--algo ppo` fixes the batch's targets with the
    policy that acted, then takes `ppo_epochs` passes over it in `ppo_minibatches` minibatches of
    whole env sequences, each re-run from its stored initial recurrent state (as CleanRL's
    ppo_atari_lstm.py). With `--return-norm` the rewards are first divided by the running scale of
    the discounted return (`reward_normalizer`, the run's, so that checkpoints hold it).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        config: Any,
        reward_normalizer: RewardNormalizer | None = None,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.config = config
        self.reward_normalizer = None
        if config.return_norm:
            self.reward_normalizer = reward_normalizer or RewardNormalizer()

    def _step(self) -> None:
        self.optimizer.step()
        clamp_unit_weights_(self.model)

    def update(
        self,
        batch: RolloutBatch,
        steps: int = 0,
        entropy_coef: float | None = None,
        handover: float | None = None,
    ) -> dict[str, float] | None:
        """Learn from `batch` after `steps` steps of the regulariser's ramp, with the entropy bonus's
        weight `entropy_coef` (default the config's starting one) and a teacher's `handover` where
        given (`ramps`): one gradient step (A3C) or the PPO epochs; None when a loss or gradient was
        NaN/inf (the update stops there)."""
        self.model.train()
        if self.reward_normalizer is not None:
            self.reward_normalizer.update(batch.discounted_return[~batch.ignored])
            batch = dataclasses.replace(batch, rewards=self.reward_normalizer.normalize(batch.rewards))
        if self.config.algo == "ppo":
            metrics = self._ppo_update(batch, steps, entropy_coef, handover)
        else:
            total, metrics = compute_loss(
                self.model, batch, self.config, steps, entropy_coef=entropy_coef, handover=handover
            )
            config = self.config
            metrics = guarded_update(
                self.model, total, metrics, config.max_grad_norm, self._step, config.grad_clip_by_part
            )
        if metrics is not None and self.reward_normalizer is not None:
            metrics["loss/return_scale"] = self.reward_normalizer.scale
        return metrics

    def _ppo_update(
        self, batch: RolloutBatch, steps: int, entropy_coef: float | None, handover: float | None
    ) -> dict[str, float] | None:
        config = self.config
        length, num_envs = batch.rewards.shape  # actions are [T, N, K] for MultiDiscrete actions
        with torch.no_grad(), autocast(config.precision, batch.actions.device):
            logits, values, _ = self.model(batch.obs, batch.episode_start, batch.initial_state)
        logits, values = logits[:length].float(), values.float()
        taken = action_log_probs(logits, batch.actions, self.model.num_actions)
        targets = batch_targets(config, batch, values, taken)
        minibatches = min(config.ppo_minibatches, num_envs)
        sums: dict[str, float] = {}
        count = 0
        for _ in range(config.ppo_epochs):
            for envs in torch.randperm(num_envs).chunk(minibatches):
                columns, column_targets = batch.columns(envs), targets.columns(envs)
                total, metrics = compute_loss(
                    self.model, columns, config, steps, column_targets, entropy_coef, handover
                )
                applied = guarded_update(
                    self.model, total, metrics, config.max_grad_norm, self._step, config.grad_clip_by_part
                )
                if applied is None:
                    return None
                for key, value in applied.items():
                    sums[key] = sums.get(key, 0.0) + value
                count += 1
        metrics = {key: value / count for key, value in sums.items()}
        metrics["loss/minibatch_updates"] = float(count)
        return metrics
