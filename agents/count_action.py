"""A count read as the index of an action: the actor's logit of action j falls with |c - j|.

An MLP or linear head over a count learns a weight per action, so it answers only counts it has
seen in training. `CountAsAction` instead adds, for every action j (its index within each component
of a MultiDiscrete action),

    -s * |c - j|,    s = MAX_SCALE * sigmoid(w) in (0, MAX_SCALE), w learned (s = 1 at the start),

with c the first entry of the count signal: the most likely action is the one nearest c, for a count
of 3 or of 25 alike, and s sets how sharply. The distance is |c - j| rather than (c - j)^2 so that the
logits fall linearly: under a policy gradient, whose reward for an exact answer reaches c only
through the actions it samples, an answer several steps off keeps a probability to be tried.
The scale is bounded for the same reason. Sharpening pays wherever c is already right, so an
unbounded s grows until the policy is deterministic, and where c is still wrong the right answer
is then never sampled and c never learns (a pilot on Count Recall Easy: s reached 50 while the read
of one of the two values stayed undecided). At s = 5 an answer one off keeps a probability of
e^-5 / Z (0.7 %) on each side, and a sampled policy whose c is exact is right 98.7 % of the time.
A Wiring's `count_as_action` puts it beside the actor's head (`ActorCritic`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from nalu_rl.agents.distributions import ActionSizes
from nalu_rl.units import run_in_float32


class CountAsAction(nn.Module):
    """count [..., 1] -> logits [..., sum of the action sizes]: -s * |count - j| per action j."""

    MAX_SCALE = 5.0

    def __init__(self, action_sizes: ActionSizes) -> None:
        super().__init__()
        sizes = [action_sizes] if isinstance(action_sizes, int) else list(action_sizes)
        indices = torch.cat([torch.arange(size, dtype=torch.float32) for size in sizes])
        # The indices follow the module's device but are not weights: not in the state dict.
        self.register_buffer("action_indices", indices, persistent=False)
        # sigmoid(w) = 1 / MAX_SCALE: s = 1 at the start.
        self.scale_logit = nn.Parameter(torch.tensor(-math.log(self.MAX_SCALE - 1.0)))

    @property
    def scale(self) -> Tensor:
        """s in (0, MAX_SCALE): how many logits one step of distance costs."""
        return self.MAX_SCALE * torch.sigmoid(self.scale_logit)

    @run_in_float32
    def forward(self, count: Tensor) -> Tensor:
        """-s * |count - j| [..., A] for the count [..., 1]."""
        return -self.scale * (count - self.action_indices).abs()

    def extra_repr(self) -> str:
        return f"actions={self.action_indices.numel()}, max_scale={self.MAX_SCALE}"
