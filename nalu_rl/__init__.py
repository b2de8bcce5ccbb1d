"""nalu_rl: arithmetic units (NAC, NALU, NAU, NMU) and, in submodules, the training runtime and CLIs.

Only the units are imported here, so `import nalu_rl` stays light.
"""

from nalu_rl.nac import NAC, NALU, nac_weight
from nalu_rl.nau import NAU, NMU, regularizer_scale, sparsity_regularizer
from nalu_rl.recurrent import RecurrentUnit
from nalu_rl.units import ARITHMETIC_UNITS, clamp_unit_weights_, make_unit, total_regularizer, unit_class

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
    "regularizer_scale",
    "sparsity_regularizer",
    "total_regularizer",
    "unit_class",
]
