"""Pilot v7: learned-count whose NAU rounds every weight to -1, 0 or +1 in the forward pass
(straight-through), registered as the agent `learned-count-rounded`."""

from dataclasses import replace

from nalu_rl.agents import register_agent
from nalu_rl.agents.catalog import LEARNED_COUNT, SIGNED_COUNT_TRAINING
from nalu_rl.units import register_unit
from nalu_rl.units.nau import SnappedNAU


class RoundedNAU(SnappedNAU):
    SNAP_TOLERANCE = 0.5


register_unit("round-nau", RoundedNAU)
register_agent(
    "learned-count-rounded",
    replace(LEARNED_COUNT, unit="round-nau"),
    "learned-count with every count weight rounded",
    training_defaults=SIGNED_COUNT_TRAINING,
)
