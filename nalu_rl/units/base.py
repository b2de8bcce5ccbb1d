"""What every arithmetic unit shares: raw weight matrices [out, in], their `extra_repr`, the regulariser.

The sparsity regulariser of Madsen & Johansen (ICLR 2020), R = mean over W of min(|W|, 1 - |W|),
is zero exactly when every weight is -1, 0 or 1. Units whose weight is a clamped raw parameter
(NAU, NMU) are pushed towards such discrete weights by it; the others (NAC, NALU) have none.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import Tensor, nn


def sparsity_regularizer(weight: Tensor) -> Tensor:
    """Madsen & Johansen's sparsity regulariser: the mean of min(|W|, 1 - |W|), a scalar >= 0."""
    magnitude = weight.abs()
    return torch.minimum(magnitude, 1 - magnitude).mean()


class ArithmeticUnit(nn.Module):
    """A bias-free layer [..., in] -> [..., out] built from raw weight matrices [out, in].

    A subclass names its raw matrices in `weight_names` (created here, uninitialised), draws them in
    its own `reset_parameters()`, which its constructor calls last, and defines `weight`, the
    effective weight its forward pass uses.
    """

    weight_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(f"in_features and out_features must be >= 1, got {in_features}, {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        for name in self.weight_names:
            self.register_parameter(name, nn.Parameter(torch.empty(out_features, in_features)))

    def reset_parameters(self) -> None:
        """Draw the raw weights afresh."""
        raise NotImplementedError

    @property
    def weight(self) -> Tensor:
        """The effective weight W [out, in] of the forward pass."""
        raise NotImplementedError

    def regularizer(self) -> Tensor:
        """Zero: this unit has no regulariser (kept for a uniform interface across units)."""
        return next(self.parameters()).new_zeros(())

    def extra_options(self) -> str:
        """The unit's options beyond its sizes, as "name=value, ..." for `extra_repr` ("" when none)."""
        return ""

    def extra_repr(self) -> str:
        sizes = f"in_features={self.in_features}, out_features={self.out_features}"
        options = self.extra_options()
        return f"{sizes}, {options}" if options else sizes


class ClampedUnit(ArithmeticUnit):
    """A unit whose weight is its raw parameter W clamped to `weight_range`, regularised towards
    discrete values by the sparsity regulariser (NAU, NMU).

    The weight is clamped in every forward pass. An optimiser step can still move the raw
    parameter outside the range, where the clamp passes no gradient; `clamp_weights_()` (or
    `nalu_rl.units.clamp_unit_weights_(model)`) after each optimiser step puts it back on the boundary.
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
