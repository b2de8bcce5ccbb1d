"""A binary gate: a learned event that is exactly 0 or 1 in the forward pass.

BinaryGate: e = step(x @ W.T + b), with step(z) = 1 where z > 0, else 0. The step has no useful
gradient, so the backward pass uses the sigmoid's (the straight-through estimator of Bengio et al.
2013, in its sigmoid form): d e / d z = sigmoid(z) (1 - sigmoid(z)). Because the forward value is
the step itself, not a rounding of a sigmoid, an event is exactly 0 or 1 at any scale of its input,
and a count of events stays an integer at any length of episode.

Its regulariser, mean(relu(margin - |z|)), pushes every pre-activation at least `margin` away from the
threshold, so that an event does not flip on small changes of what it reads; it is zero once every
z seen is that far from 0 (as the signed NAU's is zero once every weight is +-1).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from nalu_rl.units.base import mean_over_steps


class _StraightThroughStep(torch.autograd.Function):
    """step(z) forward, the sigmoid's derivative backward."""

    @staticmethod
    def forward(ctx, pre_activation: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(pre_activation)
        return (pre_activation > 0).to(pre_activation.dtype)

    @staticmethod
    def backward(ctx, grad_output: Tensor) -> Tensor:  # type: ignore[override]
        (pre_activation,) = ctx.saved_tensors
        sigmoid = torch.sigmoid(pre_activation)
        return grad_output * sigmoid * (1 - sigmoid)


def straight_through_step(pre_activation: Tensor) -> Tensor:
    """1.0 where `pre_activation` > 0, else 0.0 (exactly), with the sigmoid's gradient."""
    if not (pre_activation.requires_grad and torch.is_grad_enabled()):
        return (pre_activation > 0).to(pre_activation.dtype)  # the same value, without a Function's cost
    return _StraightThroughStep.apply(pre_activation)


class BinaryGate(nn.Module):
    """[..., in] -> events [..., out], each exactly 0 or 1: step(x @ W.T + b).

    `initial_bias` sets b at the start (a positive value starts every event on). The pre-activations
    seen with gradients since `forget_pre_activations` feed the margin regulariser.
    """

    def __init__(self, in_features: int, out_features: int, margin: float = 1.0, initial_bias: float = 0.0):
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(f"in_features and out_features must be >= 1, got {in_features}, {out_features}")
        if not margin >= 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        self.in_features = in_features
        self.out_features = out_features
        self.margin = margin
        self.initial_bias = initial_bias
        self.linear = nn.Linear(in_features, out_features)
        self._pre_activations: list[Tensor] = []
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init for the weight, `initial_bias` for the bias."""
        self.linear.reset_parameters()
        nn.init.constant_(self.linear.bias, self.initial_bias)

    def pre_activation(self, x: Tensor) -> Tensor:
        """z = x @ W.T + b [..., out]."""
        return self.linear(x)

    def events(self, pre_activation: Tensor) -> Tensor:
        """The events of pre-activations z: step(z), exactly 0 or 1; remembered for the regulariser."""
        if self.training and torch.is_grad_enabled():
            self._pre_activations.append(pre_activation)
        return straight_through_step(pre_activation)

    def forward(self, x: Tensor) -> Tensor:
        """x [..., in] -> events [..., out] in {0, 1}."""
        return self.events(self.pre_activation(x))

    def forget_pre_activations(self) -> None:
        """Drop the pre-activations kept for the regulariser (a core calls this as a sequence starts)."""
        self._pre_activations = []

    def regularizer(self) -> Tensor:
        """The mean margin shortfall of the pre-activations of the last training sequence (zero when none)."""
        if not self._pre_activations:
            return self.linear.weight.new_zeros(())
        return mean_over_steps(self._pre_activations, self._margin_shortfall)

    def _margin_shortfall(self, pre_activation: Tensor) -> Tensor:
        """relu(margin - |z|), elementwise."""
        return torch.relu(self.margin - pre_activation.abs())

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, margin={self.margin}"
