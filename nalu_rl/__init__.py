"""nalu_rl: arithmetic units (NAC, NALU, NAU, NMU; `nalu_rl.units`) and, in submodules, the training
runtime and CLIs.

Only the units are imported here, so `import nalu_rl` stays light.
"""

from nalu_rl.units import (
    ARITHMETIC_UNITS,
    NAC,
    NALU,
    NAU,
    NMU,
    RecurrentUnit,
    clamp_unit_weights_,
    make_unit,
    nac_weight,
    register_unit,
    regularizer_scale,
    sparsity_regularizer,
    total_regularizer,
    unit_class,
)

__all__ = [
    "ARITHMETIC_UNITS",
    "NAC",
    "NALU",
    "NAU",
    "NMU",
    "RecurrentUnit",
    "clamp_unit_weights_",
    "make_unit",
    "nac_weight",
    "register_unit",
    "regularizer_scale",
    "sparsity_regularizer",
    "total_regularizer",
    "unit_class",
]
