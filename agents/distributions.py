"""The policy's action distribution: one categorical per action component.

The actor head emits logits [..., sum(sizes)], split into one block per component. `action_sizes` is an
int for a Discrete action space (one categorical; actions are bare indices [...]) or a tuple for a
MultiDiscrete one (one categorical per component; actions carry the component axis [..., K]). The
components are independent given the state, so an action's log-probability and the policy's entropy
are the sums over components:
  log pi(a | x) = sum_k log softmax(logits_k)[a_k],   H(pi(. | x)) = sum_k H(softmax(logits_k)).
The losses, the actor, evaluation and playback all go through these functions.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional

ActionSizes = int | tuple[int, ...]


def logits_width(action_sizes: ActionSizes) -> int:
    """The number of logits the actor head emits for these actions."""
    return action_sizes if isinstance(action_sizes, int) else sum(action_sizes)


def _component_logits(logits: Tensor, action_sizes: ActionSizes) -> tuple[Tensor, ...]:
    sizes = [action_sizes] if isinstance(action_sizes, int) else list(action_sizes)
    if logits.shape[-1] != sum(sizes):
        raise ValueError(f"logits of width {logits.shape[-1]} for actions of sizes {action_sizes}")
    return logits.split(sizes, dim=-1)


def _component_log_policies(logits: Tensor, action_sizes: ActionSizes) -> list[Tensor]:
    return [functional.log_softmax(block, dim=-1) for block in _component_logits(logits, action_sizes)]


def _components(actions: Tensor, action_sizes: ActionSizes) -> list[Tensor]:
    if isinstance(action_sizes, int):
        return [actions]
    return list(actions.unbind(-1))


def _summed(parts: list[Tensor]) -> Tensor:
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _taken(log_policies: list[Tensor], actions: Tensor, action_sizes: ActionSizes) -> Tensor:
    components = _components(actions, action_sizes)
    return _summed(
        [
            log_policy.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)
            for log_policy, action in zip(log_policies, components, strict=True)
        ]
    )


def _entropy(log_policies: list[Tensor]) -> Tensor:
    return _summed([-(log_policy.exp() * log_policy).sum(-1) for log_policy in log_policies])


def log_prob(logits: Tensor, actions: Tensor, action_sizes: ActionSizes) -> Tensor:
    """log pi(a | x) [...] of the actions taken, under the policy logits [..., width]."""
    return _taken(_component_log_policies(logits, action_sizes), actions, action_sizes)


def entropy(logits: Tensor, action_sizes: ActionSizes) -> Tensor:
    """The policy's entropy [...] (the sum of the components' entropies)."""
    return _entropy(_component_log_policies(logits, action_sizes))


def log_prob_and_entropy(logits: Tensor, actions: Tensor, action_sizes: ActionSizes) -> tuple[Tensor, Tensor]:
    """`log_prob` and `entropy` from one log-softmax (what a loss needs, with one backward path)."""
    log_policies = _component_log_policies(logits, action_sizes)
    return _taken(log_policies, actions, action_sizes), _entropy(log_policies)


def kl_divergence(logits_p: Tensor, logits_q: Tensor, action_sizes: ActionSizes) -> Tensor:
    """KL(p || q) [...] of the policies of logits p and q [..., width] (the sum over the components)."""
    return _summed(
        [
            (log_p.exp() * (log_p - log_q)).sum(-1)
            for log_p, log_q in zip(
                _component_log_policies(logits_p, action_sizes),
                _component_log_policies(logits_q, action_sizes),
                strict=True,
            )
        ]
    )


def mixture(logits_p: Tensor, logits_q: Tensor, weight_q: float, action_sizes: ActionSizes) -> Tensor:
    """Logits of the policy (1 - w) p + w q of the policies of logits p and q, component by component
    (each block of the result is that component's log-probabilities)."""
    log_weights = logits_p.new_tensor([1.0 - weight_q, weight_q]).log().view(2, *[1] * logits_p.dim())
    blocks = [
        torch.logsumexp(torch.stack([log_p, log_q]) + log_weights, dim=0)
        for log_p, log_q in zip(
            _component_log_policies(logits_p, action_sizes),
            _component_log_policies(logits_q, action_sizes),
            strict=True,
        )
    ]
    return torch.cat(blocks, -1)


def _assemble(parts: list[Tensor], action_sizes: ActionSizes) -> Tensor:
    return parts[0] if isinstance(action_sizes, int) else torch.stack(parts, -1)


def sample(logits: Tensor, action_sizes: ActionSizes, generator: torch.Generator | None = None) -> Tensor:
    """Actions drawn from the policy (logits [B, width] -> int64 [B] or [B, K])."""
    parts = [
        torch.multinomial(log_policy.exp(), 1, generator=generator).squeeze(-1)
        for log_policy in _component_log_policies(logits, action_sizes)
    ]
    return _assemble(parts, action_sizes)


def greedy(logits: Tensor, action_sizes: ActionSizes) -> Tensor:
    """The most likely action of each component (logits [..., width] -> int64 [...] or [..., K])."""
    return _assemble([block.argmax(-1) for block in _component_logits(logits, action_sizes)], action_sizes)


def probabilities(logits: Tensor, action_sizes: ActionSizes) -> list[Tensor]:
    """The policy's probabilities, one tensor [..., size_k] per component."""
    return [functional.softmax(block, dim=-1) for block in _component_logits(logits, action_sizes)]
