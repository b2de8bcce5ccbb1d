"""Observation encoders: the paper's A3C conv net for images ("conv"), an MLP for anything else ("mlp").

Both are registered by name (`register_encoder`), as a user's encoder would be. An agent reads a
Dict observation: its "stimulus" entry goes to the cores raw (STIMULUS_KEY), every other entry is
encoded; a Box observation is the Dict of one entry, OBSERVATION_KEY.
"""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import torch
from torch import Tensor, nn

from nalu_rl.agents.registry import encoder_factory, register_encoder

STIMULUS_KEY = "stimulus"
OBSERVATION_KEY = "observation"


class PixelEncoder(nn.Module):
    """The A3C conv net of Mnih et al. (2016): conv 16@8x8/4, conv 32@4x4/2, fully connected, ReLUs.

    Reads uint8 images [..., H, W, C] (values 0..255, scaled to [0, 1] here) and returns
    features [..., feature_size].
    """

    def __init__(self, image_shape: tuple[int, int, int], feature_size: int = 256) -> None:
        super().__init__()
        height, width, channels = image_shape
        self.image_shape = (height, width, channels)
        self.feature_size = feature_size
        self.convolutions = nn.Sequential(
            nn.Conv2d(channels, 16, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            flat_size = self.convolutions(torch.zeros(1, channels, height, width)).shape[-1]
        self.fully_connected = nn.Sequential(nn.Linear(flat_size, feature_size), nn.ReLU())

    def forward(self, pixels: Tensor) -> Tensor:
        """pixels uint8 [..., H, W, C] -> features [..., feature_size]."""
        leading = pixels.shape[:-3]
        # NHWC -> NCHW as a view: the result is channels-last in memory, which the conv kernels accept.
        images = pixels.reshape(-1, *self.image_shape).permute(0, 3, 1, 2).float().mul_(1.0 / 255.0)
        return self.fully_connected(self.convolutions(images)).reshape(*leading, self.feature_size)


class MLPEncoder(nn.Module):
    """A two-layer ReLU MLP over the flattened observation (e.g. the symbolic grid's two planes)."""

    def __init__(self, input_shape: tuple[int, ...], feature_size: int = 256) -> None:
        super().__init__()
        self.input_shape = tuple(input_shape)
        self.feature_size = feature_size
        self.layers = nn.Sequential(
            nn.Linear(math.prod(self.input_shape), feature_size),
            nn.ReLU(),
            nn.Linear(feature_size, feature_size),
            nn.ReLU(),
        )

    def forward(self, observation: Tensor) -> Tensor:
        """observation [..., *input_shape] (any numeric dtype) -> features [..., feature_size]."""
        leading = observation.shape[: observation.dim() - len(self.input_shape)]
        return self.layers(observation.reshape(*leading, -1).float())


class MultiKeyEncoder(nn.Module):
    """One encoder per observation entry, their features concatenated in the order of `encoders`."""

    def __init__(self, encoders: dict[str, nn.Module]) -> None:
        super().__init__()
        self.keys = tuple(encoders)
        self.encoders = nn.ModuleDict(encoders)

    def forward(self, observation: dict[str, Tensor]) -> Tensor:
        """The entries of `observation` -> their features concatenated on the last axis."""
        return torch.cat([self.encoders[key](observation[key]) for key in self.keys], -1)


def is_image_space(space: gymnasium.spaces.Space) -> bool:
    """Whether `space` holds images: uint8 (H, W, C) with C in 1, 3, 4 and values 0..255."""
    return (
        isinstance(space, gymnasium.spaces.Box)
        and space.dtype == np.uint8
        and len(space.shape) == 3
        and space.shape[-1] in (1, 3, 4)
        and bool(np.all(space.low == 0))
        and bool(np.all(space.high == 255))
    )


def auto_encoder_name(space: gymnasium.spaces.Space) -> str:
    """The encoder "auto" picks for `space`: "conv" for images, "mlp" for anything else."""
    return "conv" if is_image_space(space) else "mlp"


def build_encoder(name: str, space: gymnasium.spaces.Space, feature_size: int) -> nn.Module:
    """The registered encoder `name` (or "auto"'s pick) for one observation entry of `space`."""
    if not isinstance(space, gymnasium.spaces.Box):
        raise ValueError(f"an observation entry must be a Box space to be encoded, got {space}")
    if name == "auto":
        name = auto_encoder_name(space)
    return encoder_factory(name)(space, feature_size)


def observation_dict_space(space: gymnasium.spaces.Space) -> gymnasium.spaces.Dict:
    """`space` as a Dict: a Dict as it is, a Box as the one entry OBSERVATION_KEY."""
    if isinstance(space, gymnasium.spaces.Dict):
        return space
    if isinstance(space, gymnasium.spaces.Box):
        return gymnasium.spaces.Dict({OBSERVATION_KEY: space})
    raise ValueError(f"observations must be a Box or a Dict of Boxes, got {space}")


register_encoder("conv", lambda space, feature_size: PixelEncoder(tuple(space.shape), feature_size))
register_encoder("mlp", lambda space, feature_size: MLPEncoder(tuple(space.shape), feature_size))
