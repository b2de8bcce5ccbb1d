"""GridSnap: values near a grid used as exactly the grid's values, and a regulariser pulling them there.

A count that adds an increment per step is exact at any length only if its increments are exact. An
increment learned to within 0.002 of 1/2 (a count of light and dark at half a step each) drifts by a
whole step within 250 steps. GridSnap uses each value within `tolerance` of a multiple of `step` as
exactly that multiple in the forward pass (straight-through: the gradient passes unchanged), and its
regulariser, the mean distance of the values seen in training to the nearest multiple, pulls the
others towards the grid, as the NAU's regulariser pulls weights to -1, 0 or +1. With a `bound` the grid
ends at -bound and +bound: a value beyond it is not snapped, and the regulariser pulls it back to the
nearer end, as the NAU's clamp keeps each weight within [-1, 1].
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from nalu_rl.units.base import mean_over_steps
from nalu_rl.units.nau import nearest_on_grid, snap_to_grid


class GridSnap(nn.Module):
    """[...] -> [...]: each value within `tolerance` of a multiple of `step` snapped onto it."""

    def __init__(self, step: float = 0.5, tolerance: float = 0.05, bound: float | None = None) -> None:
        super().__init__()
        if not step > 0:
            raise ValueError(f"step must be > 0, got {step}")
        if not 0 <= tolerance < step / 2:
            raise ValueError(f"tolerance must be in [0, step / 2), got {tolerance} for a step of {step}")
        if bound is not None and not (bound >= step and (bound / step).is_integer()):
            raise ValueError(f"bound must be a positive multiple of the step {step}, got {bound}")
        self.step = step
        self.tolerance = tolerance
        self.bound = bound
        self._values: list[Tensor] = []
        # Follows the module's device, so that a regulariser with no values is a zero on it.
        self.register_buffer("_zero", torch.zeros(()), persistent=False)

    def forward(self, value: Tensor) -> Tensor:
        """`value` snapped (`snapped`); remembered for the regulariser."""
        if self.training and torch.is_grad_enabled():
            self._values.append(value)
        return self.snapped(value)

    def snapped(self, value: Tensor) -> Tensor:
        """`value` snapped onto the grid where within the tolerance (straight-through)."""
        return snap_to_grid(value, self.step, self.tolerance, self.bound)

    def forget_values(self) -> None:
        """Drop the values kept for the regulariser (a core calls this as a sequence starts)."""
        self._values = []

    def regularizer(self) -> Tensor:
        """The mean distance to the nearest point of the grid of the values of the last training
        sequence (zero when none); its gradient moves each value towards that point."""
        if not self._values:
            return self._zero.clone()
        return mean_over_steps(self._values, self._distance_to_grid)

    def _distance_to_grid(self, value: Tensor) -> Tensor:
        """|value - the nearest point of the grid|, elementwise (the point held constant)."""
        return (value - nearest_on_grid(value.detach(), self.step, self.bound)).abs()

    def extra_repr(self) -> str:
        bound = "" if self.bound is None else f", bound={self.bound}"
        return f"step={self.step}, tolerance={self.tolerance}{bound}"


class RoundingSnap(GridSnap):
    """[...] -> [...]: every value used as the nearest multiple of `step` within [-bound, bound] (a
    value beyond the bound as the bound), whatever its distance; the gradient passes unchanged, and
    the regulariser is GridSnap's, pulling each value towards the point it is used as."""

    def __init__(self, step: float = 1.0, bound: float = 1.0) -> None:
        super().__init__(step, 0.0, bound)

    def snapped(self, value: Tensor) -> Tensor:
        return value + (nearest_on_grid(value.detach(), self.step, self.bound) - value).detach()
