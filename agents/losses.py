"""Actor-critic losses: n-step returns, GAE(lambda), V-trace, and the A3C and PPO losses side by side.

Every tensor is [T, B] (time-major) unless said otherwise; bootstrap values are [B].
`discounts[t] = gamma * (1 - terminated[t])`: a step that ends an episode never bootstraps, and
no return flows back across it. The target functions run without gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from nalu_rl.agents import distributions
from nalu_rl.agents.distributions import ActionSizes


class VTraceReturns(NamedTuple):
    """V-trace value targets vs [T, B] and policy-gradient advantages [T, B]."""

    vs: Tensor
    pg_advantages: Tensor


class LossTerms(NamedTuple):
    """The actor-critic loss (`total`, to minimise) and its parts, each a scalar."""

    total: Tensor
    policy: Tensor
    value: Tensor
    entropy: Tensor


def action_log_probs(logits: Tensor, actions: Tensor, action_sizes: ActionSizes | None = None) -> Tensor:
    """log pi(a_t | x_t) [T, B] of the taken actions [T, B] (or [T, B, K]) under the policy logits
    [T, B, A]; `action_sizes` as in `nalu_rl.agents.distributions` (default: one categorical of A)."""
    sizes = logits.shape[-1] if action_sizes is None else action_sizes
    return distributions.log_prob(logits, actions, sizes)


def policy_entropy(logits: Tensor, action_sizes: ActionSizes | None = None) -> Tensor:
    """H(pi(.|x_t)) = -sum_a pi(a|x_t) log pi(a|x_t), [T, B], of the policy logits [T, B, A] (summed
    over the components of MultiDiscrete `action_sizes`)."""
    sizes = logits.shape[-1] if action_sizes is None else action_sizes
    return distributions.entropy(logits, sizes)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of `values` over the entries where `mask` = 1 (0 when there are none)."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def masked_std(values: Tensor, mask: Tensor) -> Tensor:
    """Standard deviation (population) of `values` over the entries where `mask` = 1."""
    return masked_mean((values - masked_mean(values, mask)).square(), mask).sqrt()


@torch.no_grad()
def normalize_advantages(advantages: Tensor, mask: Tensor, eps: float = 1e-8) -> Tensor:
    """(A - mean(A)) / (std(A) + eps) over the steps where mask = 1 (SB3, CleanRL): the policy
    gradient's scale no longer follows the scale of the returns."""
    return (advantages - masked_mean(advantages, mask)) / (masked_std(advantages, mask) + eps)


@torch.no_grad()
def nstep_returns(rewards: Tensor, discounts: Tensor, bootstrap_value: Tensor) -> Tensor:
    """Bootstrapped n-step returns to the end of the unroll:

    G_t = r_t + discount_t * G_{t+1},  G_T = bootstrap_value (the value of the state after the unroll).
    """
    returns = torch.empty_like(rewards)
    following = bootstrap_value
    for t in range(rewards.shape[0] - 1, -1, -1):
        following = rewards[t] + discounts[t] * following
        returns[t] = following
    return returns


@torch.no_grad()
def gae_advantages(
    rewards: Tensor, discounts: Tensor, values: Tensor, bootstrap_value: Tensor, lam: float
) -> Tensor:
    """Generalised advantage estimates (Schulman et al. 2016):

    delta_t = r_t + discount_t * V_{t+1} - V_t,  A_t = delta_t + discount_t * lam * A_{t+1},  A_T = 0,
    with V_T = bootstrap_value. The lambda-return value targets are A_t + V_t; lam = 1 gives the
    n-step returns minus V_t, lam = 0 the one-step TD errors.
    """
    next_values = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
    deltas = rewards + discounts * next_values - values
    advantages = torch.empty_like(rewards)
    following = torch.zeros_like(bootstrap_value)
    for t in range(rewards.shape[0] - 1, -1, -1):
        following = deltas[t] + discounts[t] * lam * following
        advantages[t] = following
    return advantages


@torch.no_grad()
def vtrace(
    behaviour_log_probs: Tensor,
    target_log_probs: Tensor,
    rewards: Tensor,
    discounts: Tensor,
    values: Tensor,
    bootstrap_value: Tensor,
    rho_clip: float = 1.0,
    c_clip: float = 1.0,
) -> VTraceReturns:
    """V-trace targets for off-policy actor-critic (Espeholt et al. 2018, IMPALA, eq. 1 and section 4.2):

    rho_t = min(rho_clip, pi(a_t|x_t) / mu(a_t|x_t)),   c_t = min(c_clip, pi(a_t|x_t) / mu(a_t|x_t)),
    delta_t = rho_t * (r_t + discount_t * V_{t+1} - V_t),
    vs_t = V_t + delta_t + discount_t * c_t * (vs_{t+1} - V_{t+1}),   vs_T = V_T = bootstrap_value,
    pg_advantage_t = rho_t * (r_t + discount_t * vs_{t+1} - V_t),
    with mu the behaviour policy (the actor that acted) and pi the target policy (the learner).
    With mu = pi and clips >= 1 the vs are the n-step returns.
    """
    ratios = torch.exp(target_log_probs - behaviour_log_probs)
    rhos = torch.clamp(ratios, max=rho_clip)
    cs = torch.clamp(ratios, max=c_clip)
    next_values = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
    deltas = rhos * (rewards + discounts * next_values - values)
    corrections = torch.empty_like(values)  # vs_t - V_t
    following = torch.zeros_like(bootstrap_value)
    for t in range(values.shape[0] - 1, -1, -1):
        following = deltas[t] + discounts[t] * cs[t] * following
        corrections[t] = following
    vs = values + corrections
    next_vs = torch.cat([vs[1:], bootstrap_value.unsqueeze(0)], dim=0)
    pg_advantages = rhos * (rewards + discounts * next_vs - values)
    return VTraceReturns(vs=vs, pg_advantages=pg_advantages)


def actor_critic_loss(
    logits: Tensor,
    actions: Tensor,
    values: Tensor,
    value_targets: Tensor,
    advantages: Tensor,
    mask: Tensor,
    value_coef: float = 0.5,
    entropy_coef: float = 0.01,
    action_sizes: ActionSizes | None = None,
) -> LossTerms:
    """The advantage actor-critic (A3C) loss, averaged over the steps where mask = 1:

    policy  = -mean(log pi(a_t|x_t) * A_t)                (A_t treated as a constant)
    value   = mean(0.5 * (V_t - target_t)^2)              (target_t treated as a constant)
    entropy = mean(-sum_a pi(a|x_t) log pi(a|x_t))
    total   = policy + value_coef * value - entropy_coef * entropy
    logits [T, B, A], actions [T, B] (or [T, B, K] for MultiDiscrete `action_sizes`: log pi and the
    entropy are sums over the components), values / value_targets / advantages / mask [T, B].
    """
    sizes = logits.shape[-1] if action_sizes is None else action_sizes
    taken, step_entropy = distributions.log_prob_and_entropy(logits, actions, sizes)
    policy = -masked_mean(taken * advantages.detach(), mask)
    value = masked_mean(0.5 * (values - value_targets.detach()).square(), mask)
    entropy = masked_mean(step_entropy, mask)
    total = policy + value_coef * value - entropy_coef * entropy
    return LossTerms(total=total, policy=policy, value=value, entropy=entropy)


def ppo_loss(
    logits: Tensor,
    actions: Tensor,
    old_log_probs: Tensor,
    values: Tensor,
    old_values: Tensor,
    value_targets: Tensor,
    advantages: Tensor,
    mask: Tensor,
    clip_coef: float = 0.2,
    value_clip: float = 0.0,
    value_coef: float = 0.5,
    entropy_coef: float = 0.01,
    action_sizes: ActionSizes | None = None,
) -> LossTerms:
    """The clipped-surrogate PPO loss (Schulman et al. 2017, eq. 7 and 9), averaged where mask = 1:

    ratio_t = pi(a_t|x_t) / pi_old(a_t|x_t)
    policy  = -mean(min(ratio_t * A_t, clip(ratio_t, 1 - clip_coef, 1 + clip_coef) * A_t))
    value   = mean(0.5 * (V_t - target_t)^2), or with value_clip c > 0
              mean(0.5 * max((V_t - target_t)^2, (V_old_t + clip(V_t - V_old_t, -c, c) - target_t)^2))
    entropy, total: as `actor_critic_loss`.
    old_log_probs and old_values are those of the policy that acted; every [T, B] but logits [T, B, A]
    and actions ([T, B, K] for MultiDiscrete `action_sizes`).
    """
    sizes = logits.shape[-1] if action_sizes is None else action_sizes
    taken, step_entropy = distributions.log_prob_and_entropy(logits, actions, sizes)
    ratio = torch.exp(taken - old_log_probs.detach())
    advantages = advantages.detach()
    surrogate = torch.min(ratio * advantages, ratio.clamp(1.0 - clip_coef, 1.0 + clip_coef) * advantages)
    policy = -masked_mean(surrogate, mask)
    value_error = (values - value_targets.detach()).square()
    if value_clip > 0:
        clipped = old_values.detach() + (values - old_values.detach()).clamp(-value_clip, value_clip)
        value_error = torch.max(value_error, (clipped - value_targets.detach()).square())
    value = masked_mean(0.5 * value_error, mask)
    entropy = masked_mean(step_entropy, mask)
    total = policy + value_coef * value - entropy_coef * entropy
    return LossTerms(total=total, policy=policy, value=value, entropy=entropy)
