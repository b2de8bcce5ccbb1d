"""How each observation leaf becomes what an encoder reads: one function per space kind, one table.

The convention of Stable-Baselines3's `preprocess_obs`: a Discrete leaf becomes its one-hot vector, a
MultiDiscrete leaf the concatenated one-hots of its components, a MultiBinary leaf floats, and a Box
stays as it is (the encoders scale or cast it: the conv net reads uint8 images, the MLP anything).
The leaves themselves (a Dict or Tuple walked down to them, named by path) are `nalu_rl.spaces`; the
rollout buffers hold the leaves as the env gives them (integers stay integers), the model transforms
them on the way in. Each transform has no parameters, so it adds nothing to a checkpoint's weights;
what was chosen for each leaf is recorded beside the wiring (`ActorCritic.observation_preprocessing`).
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor
from torch.nn import functional

from nalu_rl.spaces import leaf_space


class LeafTransform:
    """A leaf's transform: `kind` names it, `output_space` is the Box its output fills (what the
    encoder is built for); calling it maps a tensor [..., *leaf shape] to [..., *output shape]."""

    kind = "box"

    def __init__(self, output_space: spaces.Box) -> None:
        self.output_space = output_space

    def __call__(self, values: Tensor) -> Tensor:
        return values


class OneHot(LeafTransform):
    """Discrete (one component, no component axis) or MultiDiscrete (a trailing component axis of
    any shape): the one-hot vectors of each component (its value minus its start), concatenated."""

    def __init__(
        self, sizes: tuple[int, ...], starts: tuple[int, ...], component_shape: tuple[int, ...]
    ) -> None:
        super().__init__(spaces.Box(0.0, 1.0, (sum(sizes),), np.float32))
        self.kind = "one_hot" if not component_shape else "one_hots"
        self.sizes, self.starts, self.component_shape = sizes, starts, component_shape

    def __call__(self, values: Tensor) -> Tensor:
        if not self.component_shape:
            return functional.one_hot(values.long() - self.starts[0], self.sizes[0]).float()
        leading = values.shape[: values.dim() - len(self.component_shape)]
        components = values.reshape(*leading, len(self.sizes)).long().unbind(-1)
        return torch.cat(
            [
                functional.one_hot(component - start, size).float()
                for component, size, start in zip(components, self.sizes, self.starts, strict=True)
            ],
            -1,
        )


class ToFloat(LeafTransform):
    """MultiBinary: its 0/1 entries as float32."""

    kind = "float"

    def __call__(self, values: Tensor) -> Tensor:
        return values.float()


def box_transform(space: spaces.Box) -> LeafTransform:
    """A Box leaf, as it is."""
    return LeafTransform(space)


def discrete_transform(space: spaces.Discrete) -> LeafTransform:
    """A Discrete leaf: its one-hot vector of width n."""
    return OneHot((int(space.n),), (int(space.start),), ())


def multi_discrete_transform(space: spaces.MultiDiscrete) -> LeafTransform:
    """A MultiDiscrete leaf: the one-hot vectors of its components concatenated, width sum(nvec)."""
    sizes = tuple(int(n) for n in space.nvec.reshape(-1))
    starts = tuple(int(start) for start in np.asarray(space.start).reshape(-1))
    return OneHot(sizes, starts, tuple(space.nvec.shape))


def multi_binary_transform(space: spaces.MultiBinary) -> LeafTransform:
    """A MultiBinary leaf: its entries as floats, in its shape."""
    return ToFloat(spaces.Box(0.0, 1.0, tuple(space.shape), np.float32))


LEAF_TRANSFORMS: dict[type[gymnasium.spaces.Space], Callable[..., LeafTransform]] = {
    spaces.Box: box_transform,
    spaces.Discrete: discrete_transform,
    spaces.MultiDiscrete: multi_discrete_transform,
    spaces.MultiBinary: multi_binary_transform,
}


def leaf_transform(space: gymnasium.spaces.Space) -> LeafTransform:
    """The transform of one observation leaf (ValueError for a space that is not a leaf)."""
    for space_type, transform in LEAF_TRANSFORMS.items():
        if isinstance(space, space_type):
            return transform(space)
    kinds = ", ".join(space_type.__name__ for space_type in LEAF_TRANSFORMS)
    raise ValueError(f"an observation leaf must be one of {kinds}, got {space}")


def observation_dict_space(space: gymnasium.spaces.Space) -> gymnasium.spaces.Dict:
    """`space` as the flat Dict of its leaves that the model reads (`nalu_rl.spaces.leaf_space`)."""
    return leaf_space(space)
