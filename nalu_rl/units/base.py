"""What every arithmetic unit shares: raw weight matrices [out, in], their `extra_repr`, a regulariser.

The regulariser is zero unless a unit defines one (the NAU and NMU's sparsity regulariser,
`nalu_rl.units.nau.ClampedUnit`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import torch
from torch import Tensor, nn

Function = TypeVar("Function", bound=Callable[..., Any])


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

    @property
    def is_linear(self) -> bool:
        """True where forward(x) is x @ weight.T: the class's forward is `linear_forward`, not overridden.
        A caller that applies the unit at many steps of one sequence may then read `weight` once."""
        return type(self).forward is linear_forward

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


def linear_forward(unit: ArithmeticUnit, x: Tensor) -> Tensor:
    """x [..., in] -> x @ unit.weight.T [..., out]: the forward pass of a unit that is linear in x."""
    return nn.functional.linear(x, unit.weight)


def mean_over_steps(steps: list[Tensor], measure: Callable[[Tensor], Tensor]) -> Tensor:
    """The mean over `steps` of mean(measure(step)): one call of `measure` on the stacked steps where
    they share a shape (the steps of one sequence), else one call per step. For a regulariser of the
    values a module saw at each step of a training sequence."""
    if len({step.shape for step in steps}) == 1:
        return measure(torch.stack(steps)).mean()
    return torch.stack([measure(step).mean() for step in steps]).mean()


def _as_float32(value: Any) -> Any:
    """`value` with its floating-point tensors (also inside tuples, lists and dicts) in float32."""
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() and value.dtype != torch.float32 else value
    if isinstance(value, (tuple, list)):
        return type(value)(_as_float32(item) for item in value)
    if isinstance(value, dict):
        return {key: _as_float32(item) for key, item in value.items()}
    return value


def run_in_float32(function: Function) -> Function:
    """`function` computed in float32 whatever the autocast around it: autocast off inside, and its
    floating-point tensor arguments cast to float32. For what must stay exact under a reduced
    precision: an arithmetic unit and the count it accumulates (bfloat16 holds integers exactly
    only up to 256)."""

    @functools.wraps(function)
    def in_float32(*args: Any, **kwargs: Any) -> Any:
        if not torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled("cuda"):
            return function(*args, **kwargs)
        with torch.autocast("cuda", enabled=False), torch.autocast("cpu", enabled=False):
            return function(*_as_float32(args), **_as_float32(kwargs))

    return in_float32  # type: ignore[return-value]
