"""The encoder "flat": an observation entry's values as they are, with no weights to learn.

A count of learned events stays a count only while its events keep meaning the same observations.
Read from a learned encoder, they do not: every update of the encoder (which the critic and the actor
train as well) moves the features an event's gate reads, and an event that flips to another slot
scrambles every count it fed. In the one-seed pilots on Count Recall Easy (docs/POPGYM.md, "The
counting agent (pilot)"), gates on a learned MLP's layer-normalised features reached an MMER of
-0.45 early and then fell back, gates on the entry's own one-hot codes 0.41, in the same 590 s.
"flat" gives the entry flattened, as floats, zero-padded to the feature size, so only the gates' own
weights decide the events. An entry wider than the feature size (an image) gets the encoder "auto"
picks for it instead: the agent still builds and trains there, with events read from learned
features. "flat-exact" is the same without the padding (its width is the entry's), for a core that
keeps one count per feature: padding would be counts that never move.
"""

from __future__ import annotations

import math

import gymnasium
from torch import Tensor, nn

from nalu_rl.agents.encoders import auto_encoder_name
from nalu_rl.agents.registry import encoder_factory, register_encoder


class FlatEncoder(nn.Module):
    """[..., *shape] -> [..., output_width]: the values flattened, as floats, then zeros up to the
    feature size where `pad` (else none). No weights."""

    def __init__(self, input_shape: tuple[int, ...], feature_size: int, pad: bool = True) -> None:
        super().__init__()
        self.input_shape = tuple(input_shape)
        self.width = math.prod(self.input_shape)
        if self.width > feature_size:
            raise ValueError(f"a flat entry of {self.width} values does not fit {feature_size} features")
        self.feature_size = feature_size if pad else self.width
        self.output_width = self.feature_size

    def forward(self, observation: Tensor) -> Tensor:
        """observation [..., *input_shape] (any numeric dtype) -> [values, 0, ...] [..., feature_size]."""
        leading = observation.shape[: observation.dim() - len(self.input_shape)]
        values = observation.reshape(*leading, self.width).float()
        return nn.functional.pad(values, (0, self.feature_size - self.width))

    def extra_repr(self) -> str:
        return f"input_shape={self.input_shape}, feature_size={self.feature_size}"


def build_flat_encoder(space: gymnasium.spaces.Box, feature_size: int, pad: bool = True) -> nn.Module:
    """The flat encoder where the entry fits `feature_size` values, else the encoder "auto" picks."""
    if math.prod(space.shape) <= feature_size:
        return FlatEncoder(tuple(space.shape), feature_size, pad)
    return encoder_factory(auto_encoder_name(space))(space, feature_size)


register_encoder("flat", build_flat_encoder)
register_encoder("flat-exact", lambda space, feature_size: build_flat_encoder(space, feature_size, pad=False))
