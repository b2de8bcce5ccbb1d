"""The arithmetic units (NAC, NALU, NAU, NMU), the recurrent cell made of one, and their registry by name.

base.py       ArithmeticUnit: the weight parameters, extra_repr and regulariser of every unit;
              run_in_float32, for what must stay exact under reduced precision
nac.py        NAC, NALU (Trask et al. 2018), nac_weight
nau.py        NAU, NMU (Madsen & Johansen 2020) and their ClampedUnit base, SignedNAU, SnappedNAU,
              GridNAU, sparsity_regularizer, regularizer_scale, snap_to_integers, snap_to_grid
gate.py       BinaryGate: learned events exactly 0 or 1 (straight-through), and its margin regulariser
grid.py       GridSnap: values near a grid used as exactly the grid's, and its pull towards the grid;
              RoundingSnap: every value used as its nearest grid point
recurrent.py  RecurrentUnit: h_t = unit([x_t, h_{t-1}])
registry.py   ARITHMETIC_UNITS by name and register_unit, unit_class, make_unit, total_regularizer,
              clamp_unit_weights_
"""

from nalu_rl.units.base import ArithmeticUnit, run_in_float32
from nalu_rl.units.gate import BinaryGate, straight_through_step
from nalu_rl.units.grid import GridSnap, RoundingSnap
from nalu_rl.units.nac import NAC, NALU, nac_weight
from nalu_rl.units.nau import (
    NAU,
    NMU,
    ClampedUnit,
    GridNAU,
    SignedNAU,
    SnappedNAU,
    regularizer_scale,
    snap_to_grid,
    snap_to_integers,
    sparsity_regularizer,
)
from nalu_rl.units.recurrent import RecurrentUnit
from nalu_rl.units.registry import (
    ARITHMETIC_UNITS,
    clamp_unit_weights_,
    make_unit,
    register_unit,
    total_regularizer,
    unit_class,
)

__all__ = [
    "ARITHMETIC_UNITS",
    "NAC",
    "NALU",
    "NAU",
    "NMU",
    "ArithmeticUnit",
    "BinaryGate",
    "ClampedUnit",
    "GridNAU",
    "GridSnap",
    "RoundingSnap",
    "RecurrentUnit",
    "SignedNAU",
    "SnappedNAU",
    "clamp_unit_weights_",
    "make_unit",
    "nac_weight",
    "register_unit",
    "regularizer_scale",
    "run_in_float32",
    "snap_to_grid",
    "snap_to_integers",
    "sparsity_regularizer",
    "straight_through_step",
    "total_regularizer",
    "unit_class",
]
