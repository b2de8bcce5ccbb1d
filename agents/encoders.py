"""Observation encoders: the paper's A3C conv net for images ("conv"), an embedding of each entry's
value for grids of integer codes ("embedding"), an MLP for anything else ("mlp").

Each is registered by name (`register_encoder`), as a user's encoder would be. An agent reads the
flat Dict of an observation's leaves (`nalu_rl.spaces`), each transformed to a Box first
(`nalu_rl.agents.observations`): its "stimulus" entry goes to the cores raw (STIMULUS_KEY), every
other entry is encoded; a bare Box observation is the Dict of one entry, OBSERVATION_KEY.
"""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import torch
from torch import Tensor, nn

from nalu_rl.agents.registry import encoder_factory, register_encoder
from nalu_rl.spaces import OBSERVATION_KEY as OBSERVATION_KEY

STIMULUS_KEY = "stimulus"
# The conv net's layers (kernel, stride): an image side below MIN_CONV_SIDE leaves nothing to convolve.
CONV_LAYERS = ((8, 4), (4, 2))
# An integer Box whose channels each take 3 to MAX_CODES values is read as codes ("embedding"); two
# values (a 0/1 plane) say nothing more as codes, and more than MAX_CODES are read as magnitudes.
MAX_CODES = 256
CODE_EMBEDDING_SIZE = 8


def conv_output_side(side: int) -> int:
    """The side of the conv net's output for an input side (<= 0: the image is too small for it)."""
    for kernel, stride in CONV_LAYERS:
        if side < kernel:
            return 0
        side = (side - kernel) // stride + 1
    return side


MIN_CONV_SIDE = next(side for side in range(1, 256) if conv_output_side(side) >= 1)


class PixelEncoder(nn.Module):
    """The A3C conv net of Mnih et al. (2016): conv 16@8x8/4, conv 32@4x4/2, fully connected, ReLUs.

    Reads uint8 images [..., H, W, C] (values 0..255, scaled to [0, 1] here) and returns
    features [..., feature_size].
    """

    def __init__(self, image_shape: tuple[int, int, int], feature_size: int = 256) -> None:
        super().__init__()
        height, width, channels = image_shape
        if min(height, width) < MIN_CONV_SIDE:
            raise ValueError(
                f"the conv encoder needs images of at least {MIN_CONV_SIDE}x{MIN_CONV_SIDE}, got "
                f"{height}x{width}x{channels}; the MLP encoder ('mlp', or 'auto') reads smaller ones"
            )
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


class CodeEmbeddingEncoder(nn.Module):
    """Integer codes (MiniGrid's object, colour and state indices) -> a learned vector per code, the
    vectors of all entries concatenated and read by the MLP.

    An MLP reads a code as a magnitude: a key (5) sits between a door (4) and a ball (6). Here each
    value of each channel (the last axis; a 1-D entry's every element is its own channel) has its own
    vector of CODE_EMBEDDING_SIZE, shared across the other axes (every cell of a grid codes alike).
    A value outside the space's bounds reads as the nearest bound.
    """

    def __init__(self, space: gymnasium.spaces.Box, feature_size: int = 256) -> None:
        super().__init__()
        if not is_code_space(space):
            raise ValueError(
                f"the embedding encoder reads integer Box entries of 3 to {MAX_CODES} values a channel, "
                f"got {space}"
            )
        lows, sizes = (values.astype(np.int64) for values in code_ranges(space))
        self.input_shape = tuple(space.shape)
        self.feature_size = feature_size
        self.register_buffer("lows", torch.as_tensor(lows, dtype=torch.long), persistent=False)
        self.register_buffer("last_codes", torch.as_tensor(sizes - 1, dtype=torch.long), persistent=False)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.register_buffer("offsets", torch.as_tensor(offsets, dtype=torch.long), persistent=False)
        self.embedding = nn.Embedding(int(sizes.sum()), CODE_EMBEDDING_SIZE)
        self.mlp = MLPEncoder((math.prod(self.input_shape) * CODE_EMBEDDING_SIZE,), feature_size)

    def forward(self, codes: Tensor) -> Tensor:
        """codes [..., *input_shape] (any integer or integral float dtype) -> features [..., feature_size]."""
        leading = codes.shape[: codes.dim() - len(self.input_shape)]
        codes = codes.reshape(*leading, *self.input_shape).long() - self.lows
        rows = torch.minimum(codes.clamp_min(0), self.last_codes) + self.offsets
        # index_select rather than the embedding's own forward: on CPU its backward (an index_add)
        # timed about 4x faster than the embedding's in a one-off timing.
        vectors = self.embedding.weight.index_select(0, rows.reshape(-1))
        return self.mlp(vectors.reshape(*leading, -1))


class MultiKeyEncoder(nn.Module):
    """One encoder per observation entry, their features concatenated in the order of `encoders`.

    An entry's encoder is registered under its name with "/" for "." (a nested entry "0.1" is
    "encoders.0/1" in the weights: torch module names cannot hold a ".")."""

    def __init__(self, encoders: dict[str, nn.Module]) -> None:
        super().__init__()
        self.keys = tuple(encoders)
        self.module_names = {key: key.replace(".", "/") for key in self.keys}
        if len(set(self.module_names.values())) != len(self.keys):
            raise ValueError(f"observation entries {self.keys} collide once '.' is written '/'")
        self.encoders = nn.ModuleDict({self.module_names[key]: encoder for key, encoder in encoders.items()})

    def forward(self, observation: dict[str, Tensor]) -> Tensor:
        """The entries of `observation` -> their features concatenated on the last axis."""
        return torch.cat([self.encoders[self.module_names[key]](observation[key]) for key in self.keys], -1)


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


def code_ranges(space: gymnasium.spaces.Box) -> tuple[np.ndarray, np.ndarray]:
    """The lowest value and the number of values of each channel (last axis) of an integer Box, as
    floats."""
    low = np.asarray(space.low).reshape(-1, space.shape[-1] if space.shape else 1)
    high = np.asarray(space.high).reshape(low.shape)
    # In floats: the bounds of an integer dtype (uint8's 255 + 1, int64's largest) overflow it.
    lows, highs = low.min(0).astype(np.float64), high.max(0).astype(np.float64)
    return lows, highs - lows + 1


def is_code_space(space: gymnasium.spaces.Space) -> bool:
    """Whether `space` holds integer codes: an integer Box whose every channel (last axis) takes
    3 to MAX_CODES values between finite bounds."""
    if not (isinstance(space, gymnasium.spaces.Box) and np.issubdtype(space.dtype, np.integer)):
        return False
    if space.shape and math.prod(space.shape) == 0:
        return False
    _, sizes = code_ranges(space)
    return bool(np.all((sizes >= 3) & (sizes <= MAX_CODES)))


def auto_encoder_name(space: gymnasium.spaces.Space) -> str:
    """The encoder "auto" picks for `space`: "conv" for images the conv net can read (at least
    MIN_CONV_SIDE on each side), "embedding" for other integer codes (MiniGrid's 7x7x3 grid view),
    "mlp" for anything else (floats, 0/1 planes, a one-hot)."""
    if is_image_space(space) and min(space.shape[:2]) >= MIN_CONV_SIDE:
        return "conv"
    return "embedding" if is_code_space(space) else "mlp"


def resolve_encoder_name(name: str, space: gymnasium.spaces.Space) -> str:
    """The registered encoder `name` stands for on `space` ("auto" resolved, any other name as it is)."""
    return auto_encoder_name(space) if name == "auto" else name


def build_encoder(name: str, space: gymnasium.spaces.Space, feature_size: int) -> nn.Module:
    """The registered encoder `name` (or "auto"'s pick) for one observation entry of `space`."""
    if not isinstance(space, gymnasium.spaces.Box):
        raise ValueError(f"an observation entry must be a Box space to be encoded, got {space}")
    return encoder_factory(resolve_encoder_name(name, space))(space, feature_size)


register_encoder("conv", lambda space, feature_size: PixelEncoder(tuple(space.shape), feature_size))
register_encoder("mlp", lambda space, feature_size: MLPEncoder(tuple(space.shape), feature_size))
register_encoder("embedding", CodeEmbeddingEncoder)
