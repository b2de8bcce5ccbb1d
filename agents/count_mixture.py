"""A policy that chooses which count answers: a mixture over the actor's own policy and each count
read as an action.

Where a counter keeps many counts (one per value of the observation, say) and the observation says
which one is asked for, a sum of the counts through gates answers right only once every gate is
decided: a half-open gate adds half of a wrong count to the answer. A mixture instead scores each
count on its own. With n_1..n_K the counts, x_t the query (the actor's inputs other than the count)
and q = softmax(W_q x_t + b_q) over K + 1 components, the policy of each action component is

    pi(j) = q_0 * softmax(head logits)_j + sum_k q_k * softmax(-s * |n_k - j|)_j

(`CountAsAction` gives each count's logits, with s learned and bounded). Under a policy gradient,
the rewarded answers raise q_k for every count that proposed them, whether or not the others are
right, so the query learns which count answers which observation count by count. The head's own
policy (component 0) starts at half the weight, so on a task where no count answers it trains as
a plain actor. The logits it returns are the mixture's log-probabilities, one block per action
component (each sums to one), which the action distributions read as any logits.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional

from nalu_rl.agents.count_action import CountAsAction
from nalu_rl.agents.distributions import ActionSizes
from nalu_rl.units import run_in_float32


class CountMixture(nn.Module):
    """(query [..., Q], counts [..., K], head logits [..., A]) -> the mixture's log-probabilities [..., A]."""

    def __init__(self, query_width: int, counts: int, action_sizes: ActionSizes) -> None:
        super().__init__()
        self.action_sizes = [action_sizes] if isinstance(action_sizes, int) else list(action_sizes)
        self.counts = counts
        self.count_as_action = CountAsAction(action_sizes)
        self.query = nn.Linear(query_width, 1 + counts)
        with torch.no_grad():
            # The head's policy starts at half the weight, the counts share the other half.
            self.query.weight.mul_(0.01)
            self.query.bias.zero_()
            self.query.bias[0] = math.log(counts)

    @run_in_float32
    def weights(self, query: Tensor) -> Tensor:
        """q [..., 1 + K]: the weight of the head's policy, then of each count's."""
        return torch.softmax(self.query(query), -1)

    @run_in_float32
    def forward(self, query: Tensor, counts: Tensor, head_logits: Tensor) -> Tensor:
        log_weights = functional.log_softmax(self.query(query), -1).unsqueeze(-1)  # [..., 1 + K, 1]
        # Each count's logits -s * |n_k - j| [..., K, A], beside the head's [..., 1, A].
        count_logits = self.count_as_action(counts.unsqueeze(-1))
        logits = torch.cat([head_logits.float().unsqueeze(-2), count_logits], -2)
        blocks = [
            torch.logsumexp(log_weights + functional.log_softmax(block, -1), dim=-2)
            for block in logits.split(self.action_sizes, dim=-1)
        ]
        return torch.cat(blocks, -1)

    def extra_repr(self) -> str:
        return f"counts={self.counts}"
