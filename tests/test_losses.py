"""The losses against plain reference loops: n-step returns, lambda-returns / GAE, V-trace, A3C loss."""

from __future__ import annotations

import math

import pytest
import torch

from nalu_rl.agents import (
    action_log_probs,
    actor_critic_loss,
    gae_advantages,
    normalize_advantages,
    nstep_returns,
    policy_entropy,
    ppo_loss,
    vtrace,
)

STEPS, BATCH, GAMMA = 7, 5, 0.9


def rollout(seed: int = 0) -> dict[str, torch.Tensor]:
    """Random rewards and values [T, B] with a few terminal steps (discount 0 there)."""
    generator = torch.Generator().manual_seed(seed)
    terminated = torch.rand(STEPS, BATCH, generator=generator) < 0.2
    terminated[2, 0] = True
    return {
        "rewards": torch.randn(STEPS, BATCH, generator=generator),
        "discounts": GAMMA * (~terminated).float(),
        "values": torch.randn(STEPS, BATCH, generator=generator),
        "bootstrap_value": torch.randn(BATCH, generator=generator),
    }


def reference_nstep(rewards, discounts, bootstrap_value):
    """G_t = sum_k (prod_{j<k} d_j) r_k + (prod_all d_j) bootstrap, as an explicit sum per element."""
    returns = torch.zeros(STEPS, BATCH)
    for b in range(BATCH):
        for t in range(STEPS):
            total, scale = 0.0, 1.0
            for k in range(t, STEPS):
                total += scale * rewards[k, b].item()
                scale *= discounts[k, b].item()
            returns[t, b] = total + scale * bootstrap_value[b].item()
    return returns


def reference_lambda_returns(rewards, discounts, values, bootstrap_value, lam):
    """G^lam_t = r_t + d_t ((1 - lam) V_{t+1} + lam G^lam_{t+1}), G^lam_T = V_T, per element."""
    returns = torch.zeros(STEPS, BATCH)
    for b in range(BATCH):
        following = bootstrap_value[b].item()
        next_value = bootstrap_value[b].item()
        for t in reversed(range(STEPS)):
            following = rewards[t, b].item() + discounts[t, b].item() * (
                (1 - lam) * next_value + lam * following
            )
            returns[t, b] = following
            next_value = values[t, b].item()
    return returns


def reference_vtrace(log_ratios, rewards, discounts, values, bootstrap_value, rho_clip, c_clip):
    """Espeholt et al. eq. 1 as written: vs_t = V_t + sum_{s>=t} (prod_{t<=i<s} d_i c_i) delta_s."""
    ratios = log_ratios.exp()
    vs = torch.zeros(STEPS, BATCH)
    advantages = torch.zeros(STEPS, BATCH)
    for b in range(BATCH):
        value = [values[t, b].item() for t in range(STEPS)] + [bootstrap_value[b].item()]
        rho = [min(rho_clip, ratios[t, b].item()) for t in range(STEPS)]
        c = [min(c_clip, ratios[t, b].item()) for t in range(STEPS)]
        delta = [
            rho[t] * (rewards[t, b].item() + discounts[t, b].item() * value[t + 1] - value[t])
            for t in range(STEPS)
        ]
        for t in range(STEPS):
            total, trace = 0.0, 1.0
            for s in range(t, STEPS):
                total += trace * delta[s]
                trace *= discounts[s, b].item() * c[s]
            vs[t, b] = value[t] + total
    for b in range(BATCH):
        for t in range(STEPS):
            next_vs = vs[t + 1, b].item() if t + 1 < STEPS else bootstrap_value[b].item()
            rho = min(rho_clip, ratios[t, b].item())
            advantages[t, b] = rho * (
                rewards[t, b].item() + discounts[t, b].item() * next_vs - values[t, b].item()
            )
    return vs, advantages


def test_nstep_returns_match_the_explicit_discounted_sum() -> None:
    data = rollout()
    expected = reference_nstep(data["rewards"], data["discounts"], data["bootstrap_value"])
    actual = nstep_returns(data["rewards"], data["discounts"], data["bootstrap_value"])
    torch.testing.assert_close(actual, expected)


def test_terminal_step_never_bootstraps_nor_passes_later_rewards_back() -> None:
    rewards = torch.zeros(4, 1)
    rewards[1, 0], rewards[3, 0] = 1.0, 100.0
    discounts = torch.full((4, 1), GAMMA)
    discounts[1, 0] = 0.0  # the episode ends at step 1
    values = torch.zeros(4, 1)
    bootstrap = torch.tensor([1000.0])
    returns = nstep_returns(rewards, discounts, bootstrap)
    assert returns[1, 0].item() == 1.0
    assert returns[0, 0].item() == pytest.approx(GAMMA)
    lambda_targets = gae_advantages(rewards, discounts, values, bootstrap, 0.95) + values
    assert lambda_targets[1, 0].item() == 1.0
    on_policy = torch.zeros(4, 1)
    assert vtrace(on_policy, on_policy, rewards, discounts, values, bootstrap).vs[1, 0].item() == 1.0


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_gae_gives_the_lambda_returns_of_the_reference_loop(lam: float) -> None:
    data = rollout(1)
    expected = reference_lambda_returns(**data, lam=lam)
    advantages = gae_advantages(**data, lam=lam)
    torch.testing.assert_close(advantages + data["values"], expected)


def test_gae_with_lambda_one_is_nstep_return_minus_value_and_with_zero_the_td_error() -> None:
    data = rollout(2)
    nstep = nstep_returns(data["rewards"], data["discounts"], data["bootstrap_value"])
    torch.testing.assert_close(gae_advantages(**data, lam=1.0), nstep - data["values"])
    next_values = torch.cat([data["values"][1:], data["bootstrap_value"][None]])
    td_errors = data["rewards"] + data["discounts"] * next_values - data["values"]
    torch.testing.assert_close(gae_advantages(**data, lam=0.0), td_errors)


def test_vtrace_on_policy_equals_nstep_returns() -> None:
    data = rollout(3)
    log_probs = torch.log(torch.rand(STEPS, BATCH, generator=torch.Generator().manual_seed(4)))
    returns = vtrace(log_probs, log_probs, **data)
    expected = reference_nstep(data["rewards"], data["discounts"], data["bootstrap_value"])
    torch.testing.assert_close(returns.vs, expected)
    next_vs = torch.cat([expected[1:], data["bootstrap_value"][None]])
    torch.testing.assert_close(
        returns.pg_advantages, data["rewards"] + data["discounts"] * next_vs - data["values"]
    )


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95])
def test_vtrace_on_policy_with_trace_clip_lambda_equals_lambda_returns(lam: float) -> None:
    data = rollout(5)
    log_probs = torch.zeros(STEPS, BATCH)
    returns = vtrace(log_probs, log_probs, **data, rho_clip=1.0, c_clip=lam)
    torch.testing.assert_close(returns.vs, reference_lambda_returns(**data, lam=lam))


@pytest.mark.parametrize(("rho_clip", "c_clip"), [(1.0, 1.0), (2.0, 0.5), (math.inf, math.inf), (0.3, 1.0)])
def test_vtrace_off_policy_matches_the_paper_formula_with_clipping(rho_clip: float, c_clip: float) -> None:
    data = rollout(6)
    generator = torch.Generator().manual_seed(7)
    behaviour = torch.log(torch.rand(STEPS, BATCH, generator=generator))
    target = torch.log(torch.rand(STEPS, BATCH, generator=generator))
    returns = vtrace(behaviour, target, **data, rho_clip=rho_clip, c_clip=c_clip)
    expected_vs, expected_advantages = reference_vtrace(
        target - behaviour, **data, rho_clip=rho_clip, c_clip=c_clip
    )
    torch.testing.assert_close(returns.vs, expected_vs)
    torch.testing.assert_close(returns.pg_advantages, expected_advantages)


def test_vtrace_clips_importance_weights_at_rho_and_c() -> None:
    """One step: vs = V + min(rho_clip, pi/mu) * delta; two steps: the trace c = min(c_clip, pi/mu)."""
    value, reward, bootstrap = torch.tensor([[0.5]]), torch.tensor([[1.0]]), torch.tensor([2.0])
    discount = torch.tensor([[GAMMA]])
    delta = 1.0 + GAMMA * 2.0 - 0.5
    for ratio, rho_clip, weight in [
        (4.0, 1.0, 1.0),
        (0.25, 1.0, 0.25),
        (4.0, 2.0, 2.0),
        (4.0, math.inf, 4.0),
    ]:
        log_ratio = torch.tensor([[math.log(ratio)]])
        returns = vtrace(torch.zeros(1, 1), log_ratio, reward, discount, value, bootstrap, rho_clip=rho_clip)
        assert returns.vs.item() == pytest.approx(0.5 + weight * delta)
        assert returns.pg_advantages.item() == pytest.approx(weight * delta)
    # A trace cut to zero (c_clip = 0) leaves the one-step target: later errors do not flow back.
    values = torch.tensor([[0.5], [0.25]])
    rewards = torch.tensor([[1.0], [3.0]])
    discounts = torch.full((2, 1), GAMMA)
    zeros = torch.zeros(2, 1)
    cut = vtrace(zeros, zeros, rewards, discounts, values, bootstrap, c_clip=0.0)
    assert cut.vs[0, 0].item() == pytest.approx(1.0 + GAMMA * 0.25)
    full = vtrace(zeros, zeros, rewards, discounts, values, bootstrap, c_clip=1.0)
    assert full.vs[0, 0].item() == pytest.approx(1.0 + GAMMA * (3.0 + GAMMA * 2.0))


def test_targets_carry_no_gradient() -> None:
    data = {key: value.requires_grad_() for key, value in rollout(8).items()}
    log_probs = torch.zeros(STEPS, BATCH, requires_grad=True)
    assert not vtrace(log_probs, log_probs, **data).vs.requires_grad
    assert not nstep_returns(data["rewards"], data["discounts"], data["bootstrap_value"]).requires_grad
    assert not gae_advantages(**data, lam=0.9).requires_grad


def loss_inputs(seed: int = 9) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {
        "logits": torch.randn(STEPS, BATCH, 5, generator=generator, requires_grad=True),
        "actions": torch.randint(0, 5, (STEPS, BATCH), generator=generator),
        "values": torch.randn(STEPS, BATCH, generator=generator, requires_grad=True),
        "value_targets": torch.randn(STEPS, BATCH, generator=generator),
        "advantages": torch.randn(STEPS, BATCH, generator=generator),
        "mask": (torch.rand(STEPS, BATCH, generator=generator) < 0.8).float(),
    }


def test_actor_critic_loss_terms_match_their_formulas() -> None:
    inputs = loss_inputs()
    terms = actor_critic_loss(**inputs, value_coef=0.25, entropy_coef=0.1)
    mask, count = inputs["mask"], inputs["mask"].sum()
    probabilities = torch.softmax(inputs["logits"], -1)
    taken = action_log_probs(inputs["logits"], inputs["actions"])
    torch.testing.assert_close(
        taken, probabilities.gather(-1, inputs["actions"][..., None]).squeeze(-1).log()
    )
    torch.testing.assert_close(terms.policy, -(taken * inputs["advantages"] * mask).sum() / count)
    squared_errors = (inputs["values"] - inputs["value_targets"]) ** 2
    torch.testing.assert_close(terms.value, (0.5 * squared_errors * mask).sum() / count)
    entropies = -(probabilities * probabilities.log()).sum(-1)
    torch.testing.assert_close(terms.entropy, (entropies * mask).sum() / count)
    torch.testing.assert_close(terms.total, terms.policy + 0.25 * terms.value - 0.1 * terms.entropy)


def test_masked_steps_do_not_count_in_the_loss_or_its_gradient() -> None:
    inputs = loss_inputs()
    reference = actor_critic_loss(**inputs).total
    reference.backward()
    masked = inputs["mask"] == 0
    assert masked.any()
    assert (inputs["logits"].grad[masked] == 0).all() and (inputs["values"].grad[masked] == 0).all()
    changed = dict(inputs)
    changed["logits"] = inputs["logits"].detach() + 5.0 * masked[..., None] * torch.randn(STEPS, BATCH, 5)
    changed["advantages"] = torch.where(
        masked, torch.full_like(inputs["advantages"], 1e6), inputs["advantages"]
    )
    torch.testing.assert_close(actor_critic_loss(**changed).total, reference.detach())


def test_uniform_policy_has_entropy_log_num_actions_and_policy_gradient_follows_advantage() -> None:
    logits = torch.zeros(1, 1, 5, requires_grad=True)
    actions = torch.tensor([[2]])
    terms = actor_critic_loss(
        logits, actions, torch.zeros(1, 1), torch.zeros(1, 1), torch.tensor([[1.0]]), torch.ones(1, 1)
    )
    assert terms.entropy.item() == pytest.approx(math.log(5))
    terms.policy.backward()
    # A positive advantage: descending the loss raises the taken action's logit, lowers the others.
    assert logits.grad[0, 0, 2] < 0 and (logits.grad[0, 0, [0, 1, 3, 4]] > 0).all()


def ppo_inputs(seed: int = 9) -> dict[str, torch.Tensor]:
    inputs = loss_inputs(seed)
    generator = torch.Generator().manual_seed(seed + 1)
    taken = action_log_probs(inputs["logits"].detach(), inputs["actions"])
    inputs["old_log_probs"] = taken + 0.5 * torch.randn(STEPS, BATCH, generator=generator)
    inputs["old_values"] = inputs["values"].detach() + 0.5 * torch.randn(STEPS, BATCH, generator=generator)
    return inputs


def test_ppo_loss_terms_match_the_clipped_surrogate_and_clipped_value_formulas() -> None:
    inputs = ppo_inputs()
    terms = ppo_loss(**inputs, clip_coef=0.2, value_clip=0.3, value_coef=0.25, entropy_coef=0.1)
    mask, count = inputs["mask"], inputs["mask"].sum()
    advantages = inputs["advantages"]
    ratio = (action_log_probs(inputs["logits"], inputs["actions"]) - inputs["old_log_probs"]).exp()
    surrogate = torch.minimum(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages)
    torch.testing.assert_close(terms.policy, -(surrogate * mask).sum() / count)
    values, old, targets = inputs["values"], inputs["old_values"], inputs["value_targets"]
    clipped = old + (values - old).clamp(-0.3, 0.3)
    errors = torch.maximum((values - targets) ** 2, (clipped - targets) ** 2)
    torch.testing.assert_close(terms.value, (0.5 * errors * mask).sum() / count)
    torch.testing.assert_close(terms.entropy, (policy_entropy(inputs["logits"]) * mask).sum() / count)
    torch.testing.assert_close(terms.total, terms.policy + 0.25 * terms.value - 0.1 * terms.entropy)


def test_ppo_on_the_acting_policy_has_the_a3c_gradient() -> None:
    # At ratio 1 nothing is clipped: the surrogate's gradient is the policy gradient of A3C.
    def gradients(loss_function, **extra: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = loss_inputs()
        loss_function(**inputs, **extra).total.backward()
        return inputs["logits"].grad, inputs["values"].grad

    reference = loss_inputs()
    acting_log_probs = action_log_probs(reference["logits"].detach(), reference["actions"])
    ppo = gradients(ppo_loss, old_log_probs=acting_log_probs, old_values=reference["values"].detach())
    a3c = gradients(actor_critic_loss)
    torch.testing.assert_close(ppo[0], a3c[0])
    torch.testing.assert_close(ppo[1], a3c[1])


def test_ppo_gives_no_gradient_where_the_ratio_is_clipped_in_the_advantages_direction() -> None:
    logits = torch.zeros(1, 1, 3, requires_grad=True)
    actions = torch.tensor([[0]])
    # The taken action is already 1.5 times as likely as when it acted, with a positive advantage.
    old = action_log_probs(logits.detach(), actions) - math.log(1.5)
    ones, zeros = torch.ones(1, 1), torch.zeros(1, 1)
    terms = ppo_loss(logits, actions, old, zeros, zeros, zeros, ones, ones, clip_coef=0.2, entropy_coef=0.0)
    terms.total.backward()
    assert (logits.grad == 0).all()
    # With a negative advantage the ratio is outside the clip on the other side: the gradient flows.
    logits.grad = None
    ppo_loss(logits, actions, old, zeros, zeros, zeros, -ones, ones, entropy_coef=0.0).total.backward()
    assert logits.grad[0, 0, 0] > 0


def test_advantage_normalisation_uses_the_unmasked_steps_only() -> None:
    advantages = torch.tensor([[1.0, 3.0], [5.0, 1000.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    normalized = normalize_advantages(advantages, mask)
    kept = normalized[mask.bool()]
    torch.testing.assert_close(kept.mean(), torch.tensor(0.0))
    torch.testing.assert_close(kept.std(unbiased=False), torch.tensor(1.0), atol=1e-6, rtol=1e-6)
