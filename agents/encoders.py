"""Observation encoders: the paper's A3C conv net for pixels, an MLP for the symbolic grid."""

from __future__ import annotations

import math

import gymnasium
import torch
from torch import Tensor, nn


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


class GridEncoder(nn.Module):
    """A two-layer ReLU MLP over the flattened symbolic grid (agent and target planes)."""

    def __init__(self, grid_shape: tuple[int, ...], feature_size: int = 256) -> None:
        super().__init__()
        self.grid_shape = tuple(grid_shape)
        self.feature_size = feature_size
        self.layers = nn.Sequential(
            nn.Linear(math.prod(grid_shape), feature_size),
            nn.ReLU(),
            nn.Linear(feature_size, feature_size),
            nn.ReLU(),
        )

    def forward(self, grid: Tensor) -> Tensor:
        """grid uint8 [..., planes, S, S] -> features [..., feature_size]."""
        leading = grid.shape[: grid.dim() - len(self.grid_shape)]
        return self.layers(grid.reshape(*leading, -1).float())


def make_encoder(observation_space: gymnasium.spaces.Dict, feature_size: int = 256) -> tuple[str, nn.Module]:
    """The observation key to encode ("pixels" or "grid") and the encoder built for its shape."""
    spaces = getattr(observation_space, "spaces", None)
    if not isinstance(spaces, dict) or "stimulus" not in spaces:
        raise ValueError(f"observation_space must be a Dict with a 'stimulus' key, got {observation_space}")
    if "pixels" in spaces:
        return "pixels", PixelEncoder(tuple(spaces["pixels"].shape), feature_size)
    if "grid" in spaces:
        return "grid", GridEncoder(tuple(spaces["grid"].shape), feature_size)
    raise ValueError(f"observation_space needs a 'pixels' or a 'grid' key, got keys {sorted(spaces)}")
