"""The Neural Addition Unit (NAU) and Neural Multiplication Unit (NMU) of Madsen & Johansen (ICLR 2020).

NAU: y = x @ W.T with W clamped to [-1, 1].
NMU: y_j = prod_i (W_ji * x_i + 1 - W_ji) with W clamped to [0, 1] (W_ji = 1 takes x_i into the
     product, W_ji = 0 leaves it out).
Both are pushed towards discrete weights by the sparsity regulariser
R = mean over W of min(|W|, 1 - |W|), which is zero exactly when every weight is -1, 0 or 1; its
weight in the loss grows over training by `regularizer_scale`.

The weights are clamped in every forward pass. An optimiser step can still move the raw parameter
outside the range, where the clamp passes no gradient; `clamp_weights_()` (or
`nalu_rl.units.clamp_unit_weights_(model)`) after each optimiser step puts it back on the boundary.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
from torch import Tensor, nn

from nalu_rl.units.base import ArithmeticUnit, linear_forward


def sparsity_regularizer(weight: Tensor) -> Tensor:
    """Madsen & Johansen's sparsity regulariser: the mean of min(|W|, 1 - |W|), a scalar >= 0."""
    magnitude = weight.abs()
    return torch.minimum(magnitude, 1 - magnitude).mean()


def regularizer_scale(step: int, start: int, end: int, max_scale: float) -> float:
    """The regulariser's weight at `step`: 0 before `start`, rising linearly to `max_scale` at `end`."""
    if end <= start:
        return max_scale if step >= start else 0.0
    return max_scale * min(max((step - start) / (end - start), 0.0), 1.0)


def init_bound(in_features: int, out_features: int) -> float:
    """Madsen & Johansen's NAU initialisation bound r = min(1/2, sqrt(3) * std), std = sqrt(2 / (in + out)).

    sqrt(3) * std is the Glorot-uniform bound; the cap at 1/2 keeps every weight at its start
    strictly between the regulariser's zeros (0 and +-1), where it still pulls. Without the cap a
    small unit (2 inputs, 1 output: bound 1.41) often starts with a weight clamped to exactly +-1,
    committed to a vertex before training has said which.
    """
    return min(0.5, math.sqrt(3.0) * math.sqrt(2.0 / (in_features + out_features)))


class ClampedUnit(ArithmeticUnit):
    """What the NAU and the NMU share: the weight is the raw parameter W clamped to `weight_range`,
    and the sparsity regulariser pulls it towards discrete values.
    """

    weight_names = ("W",)
    weight_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    @torch.no_grad()
    def clamp_weights_(self) -> None:
        """Put the raw parameter back into `weight_range` in place (call after an optimiser step)."""
        self.W.clamp_(*self.weight_range)

    @property
    def weight(self) -> Tensor:
        """The weight used in the forward pass: W clamped to `weight_range`."""
        return torch.clamp(self.W, *self.weight_range)

    def regularizer(self) -> Tensor:
        """The sparsity regulariser of the weight (unscaled; multiply by `regularizer_scale`)."""
        return sparsity_regularizer(self.weight)


class NAU(ClampedUnit):
    """Neural Addition Unit: a bias-free linear layer with weights clamped to [-1, 1]."""

    weight_range = (-1.0, 1.0)

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw W uniformly from [-r, r] with r = `init_bound(in, out)` (at most 1/2)."""
        bound = init_bound(self.in_features, self.out_features)
        nn.init.uniform_(self.W, -bound, bound)

    forward = linear_forward  # x [..., in] -> x @ W.T [..., out]


class SignedNAU(NAU):
    """A NAU whose regulariser pulls every weight to -1 or +1, never to 0: mean of 1 - |W|.

    For a unit that must use each of its inputs with a weight of exactly one, such as the count of
    the time left T - t - 1 from [stimulus, 1] (both weights +-1). The sparsity regulariser pulls a
    weight smaller than 1/2 to 0, where such a count is lost; this one keeps each weight's sign and
    takes its magnitude to 1.
    """

    def regularizer(self) -> Tensor:
        """The mean of 1 - |W| (zero exactly when every weight is -1 or +1; unscaled)."""
        return (1 - self.weight.abs()).mean()


def snap_to_grid(value: Tensor, step: float, tolerance: float, bound: float | None = None) -> Tensor:
    """`value` with each entry within `tolerance` of a multiple of `step` (one within [-bound, bound]
    where a bound is given) replaced by exactly that multiple in the forward pass; the gradient passes
    to the raw value unchanged (straight-through). With `step` a power of two the multiples, and sums
    of them, are exact in floating point."""
    nearest = nearest_on_grid(value.detach(), step, bound)
    near = (value.detach() - nearest).abs() <= tolerance
    if not (value.requires_grad and torch.is_grad_enabled()):
        return torch.where(near, nearest, value)
    # nearest + (v - v) is nearest exactly, yet its gradient with respect to v is 1.
    return torch.where(near, nearest + (value - value.detach()), value)


def nearest_on_grid(value: Tensor, step: float, bound: float | None = None) -> Tensor:
    """The multiple of `step` nearest to each entry of `value`; with a `bound` (itself a multiple of
    `step`), the nearest of those within [-bound, bound]."""
    nearest = (value / step).round() * step
    return nearest if bound is None else nearest.clamp(-bound, bound)


def snap_to_integers(weight: Tensor, tolerance: float) -> Tensor:
    """`weight` with each entry within `tolerance` of an integer replaced by exactly that integer in
    the forward pass; the gradient passes to the raw weight unchanged (straight-through)."""
    return snap_to_grid(weight, 1.0, tolerance)


class SnappedNAU(NAU):
    """A NAU whose forward pass uses each weight within `SNAP_TOLERANCE` of -1, 0 or +1 as exactly that.

    The NAU's regulariser brings the weights near -1, 0 or +1 but, against the noise of
    reinforcement learning, seldom onto 0 (a weight clamped at +-1 stays there; one hovering at
    0.003 adds 3 to a count over 1000 steps). Snapped, the weights the regulariser has brought close
    are exact, so a count of integer inputs stays an integer at any length; the regulariser and the
    gradient still act on the raw weights, so a weight can leave the snap zone if the loss asks.
    """

    SNAP_TOLERANCE = 0.05

    @property
    def weight(self) -> Tensor:
        """W clamped to [-1, 1], each entry within SNAP_TOLERANCE of an integer snapped onto it."""
        return snap_to_integers(super().weight, self.SNAP_TOLERANCE)

    def regularizer(self) -> Tensor:
        """The sparsity regulariser of the raw (clamped, unsnapped) weight."""
        return sparsity_regularizer(super().weight)


class GridNAU(SnappedNAU):
    """The snapped NAU without its weights' sparsity regulariser: its weights are free in [-1, 1].

    Where what a count adds is pulled onto a grid elsewhere (the event counter's `GridSnap`, multiples
    of 1/2) and every event comes with its complement, the count is exact once each step's increment
    is on that grid, whatever the weights that add it; the pull of each weight to -1, 0 or +1 can
    hold a count off the grid instead (a step of -0.498 down and +0.574 up, in the journal of
    2026-12-07, "Increments on the grid, weights free").
    """

    def regularizer(self) -> Tensor:
        """None: a zero scalar."""
        return self.weight.new_zeros(())


class NMU(ClampedUnit):
    """Neural Multiplication Unit: y_j = prod_i (W_ji * x_i + 1 - W_ji), W clamped to [0, 1]."""

    weight_range = (0.0, 1.0)

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw W uniformly from [1/4, 3/4]: centred on 1/2, undecided between using an input or not."""
        # A start at 1/2 keeps every factor W x + 1 - W away from both "ignore" (W = 0) and "use"
        # (W = 1), so no input is excluded from the product before training has seen it.
        nn.init.uniform_(self.W, 0.25, 0.75)

    def forward(self, x: Tensor) -> Tensor:
        """x [..., in] -> prod_i (W_ji x_i + 1 - W_ji) [..., out]."""
        weight = self.weight
        factors = x.unsqueeze(-2) * weight + (1 - weight)  # [..., out, in]
        return factors.prod(dim=-1)
