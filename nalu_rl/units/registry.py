"""The registry of arithmetic units by name, and what applies to every unit of a model at once."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from nalu_rl.units.base import ArithmeticUnit
from nalu_rl.units.gate import BinaryGate
from nalu_rl.units.nac import NAC, NALU
from nalu_rl.units.nau import NAU, NMU, ClampedUnit, SignedNAU

ARITHMETIC_UNITS: dict[str, type[nn.Module]] = {
    "nac": NAC,
    "nalu": NALU,
    "nau": NAU,
    "signed-nau": SignedNAU,
    "nmu": NMU,
}


def unit_class(name_or_class: str | type[nn.Module]) -> type[nn.Module]:
    """The unit class for a registry name ("nac", "nalu", "nau", "nmu") or a class passed through."""
    if isinstance(name_or_class, type):
        return name_or_class
    try:
        return ARITHMETIC_UNITS[name_or_class]
    except KeyError:
        known = ", ".join(sorted(ARITHMETIC_UNITS))
        raise ValueError(f"unknown arithmetic unit {name_or_class!r}; known units: {known}") from None


def make_unit(
    name_or_class: str | type[nn.Module], in_features: int, out_features: int, **options: Any
) -> nn.Module:
    """Build the unit named `name_or_class` (or of that class) with the given sizes and options."""
    return unit_class(name_or_class)(in_features, out_features, **options)


def total_regularizer(model: nn.Module) -> Tensor:
    """The sum of `regularizer()` over every arithmetic unit and binary gate inside `model` (0 when
    there is none)."""
    terms = [
        module.regularizer() for module in model.modules() if isinstance(module, (ArithmeticUnit, BinaryGate))
    ]
    if not terms:
        parameter = next(model.parameters(), None)
        return torch.zeros((), device=None if parameter is None else parameter.device)
    return torch.stack(terms).sum()


def clamp_unit_weights_(model: nn.Module) -> None:
    """Put the raw weights of every NAU / NMU inside `model` back into range (after an optimiser step)."""
    for module in model.modules():
        if isinstance(module, ClampedUnit):
            module.clamp_weights_()
