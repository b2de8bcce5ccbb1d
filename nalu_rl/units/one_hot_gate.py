"""A one-hot gate: of K learned events, exactly one happens at each step.

OneHotGate: e = one_hot(argmax(x @ W.T + b)), K entries exactly 0 or 1 with exactly one 1, in the
forward pass. The argmax has no useful gradient, so the backward pass uses the softmax's (the
straight-through estimator, in its softmax form, as `BinaryGate` uses the sigmoid's for one event):
d e / d z = d softmax(z) / d z. The forward value is the one-hot itself, not a rounding of the
softmax, so a count of these events is an integer at any length of episode. Where one thing of K
kinds arrives at each step (a card of one value), one event per step is the right prior: two values
cannot both count the same step.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def straight_through_one_hot(logits: Tensor) -> Tensor:
    """one_hot(argmax(logits)) over the last axis, exactly 0 or 1, with the softmax's gradient."""
    hard = nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    if not (logits.requires_grad and torch.is_grad_enabled()):
        return hard
    soft = logits.softmax(-1)
    # soft - soft.detach() is exactly 0 in the forward pass, yet carries the softmax's gradient.
    return hard + (soft - soft.detach())


class OneHotGate(nn.Module):
    """[..., in] -> events [..., out]: one_hot(argmax(x @ W.T + b)), exactly one event per step."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        if in_features < 1 or out_features < 2:
            raise ValueError(
                f"a one-hot gate needs >= 1 input and >= 2 events, got {in_features} and {out_features}"
            )
        self.in_features = in_features
        self.out_features = out_features
        self.linear = nn.Linear(in_features, out_features)

    def pre_activation(self, x: Tensor) -> Tensor:
        """z = x @ W.T + b [..., out]."""
        return self.linear(x)

    def forward(self, x: Tensor) -> Tensor:
        """x [..., in] -> events [..., out], one-hot."""
        return straight_through_one_hot(self.pre_activation(x))

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"
