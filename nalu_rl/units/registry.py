"""The registry of arithmetic units by name, and what applies to every unit of a model at once.

The project's units are registered through the call a user's module makes (docs/EXTENDING.md,
"A unit"); a Wiring's `unit` names one, and a counter core builds it with `make_unit`:

    register_unit("npu", RealNPU)      # RealNPU(in_features, out_features) -> an ArithmeticUnit

Names are looked up when a unit is built, so a unit registered after import is seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from nalu_rl.units.base import ArithmeticUnit
from nalu_rl.units.gate import BinaryGate
from nalu_rl.units.grid import GridSnap
from nalu_rl.units.nac import NAC, NALU
from nalu_rl.units.nau import NAU, NMU, ClampedUnit, GridNAU, SignedNAU, SnappedNAU

ARITHMETIC_UNITS: dict[str, type[ArithmeticUnit]] = {}


def check_entry_name(kind: str, name: str, table: Mapping[str, Any], replace_existing: bool) -> None:
    """ValueError unless `name` may be registered as a `kind` in `table`: a non-empty string without
    surrounding spaces, not yet taken unless `replace_existing`. Every registry of parts uses it."""
    if not isinstance(name, str) or not name or name.strip() != name:
        raise ValueError(f"a {kind} name must be a non-empty string without surrounding spaces, got {name!r}")
    if name in table and not replace_existing:
        raise ValueError(f"{kind} {name!r} is already registered; pass replace=True to replace it")


def register_unit(name: str, unit: type[ArithmeticUnit], *, replace: bool = False) -> None:
    """Make the class `unit` the arithmetic unit called `name` (a Wiring's `unit`).

    `unit(in_features, out_features, **options)` builds a module mapping [..., in] to [..., out]. As
    a subclass of `ArithmeticUnit`, its `regularizer()` joins the loss, its parameters the units'
    learning-rate group (--unit-lr-scale) and its `weight` the TensorBoard histograms.
    """
    check_entry_name("unit", name, ARITHMETIC_UNITS, replace)
    if not (isinstance(unit, type) and issubclass(unit, ArithmeticUnit)):
        raise ValueError(f"unit {name!r}: expected a subclass of nalu_rl.units.ArithmeticUnit, got {unit!r}")
    ARITHMETIC_UNITS[name] = unit


def unit_class(name_or_class: str | type[nn.Module]) -> type[nn.Module]:
    """The unit class registered as `name_or_class` ("nac", "nau", ...), or a class passed through;
    ValueError naming the registered units for an unknown name."""
    if isinstance(name_or_class, type):
        return name_or_class
    if name_or_class not in ARITHMETIC_UNITS:
        known = ", ".join(ARITHMETIC_UNITS) or "none"
        raise ValueError(f"unknown arithmetic unit {name_or_class!r}; registered arithmetic units: {known}")
    return ARITHMETIC_UNITS[name_or_class]


def make_unit(
    name_or_class: str | type[nn.Module], in_features: int, out_features: int, **options: Any
) -> nn.Module:
    """Build the unit named `name_or_class` (or of that class) with the given sizes and options."""
    return unit_class(name_or_class)(in_features, out_features, **options)


def total_regularizer(model: nn.Module) -> Tensor:
    """The sum of `regularizer()` over every arithmetic unit, binary gate and grid snap inside `model`
    (0 when there is none)."""
    terms = [
        module.regularizer()
        for module in model.modules()
        if isinstance(module, (ArithmeticUnit, BinaryGate, GridSnap))
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


# The project's units, registered as a user's unit is.
for _name, _unit in (
    ("nac", NAC),
    ("nalu", NALU),
    ("nau", NAU),
    ("snap-nau", SnappedNAU),
    ("grid-nau", GridNAU),
    ("signed-nau", SignedNAU),
    ("nmu", NMU),
):
    register_unit(_name, _unit)
