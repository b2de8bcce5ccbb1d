"""An env's spaces as nalu_rl reads them (Gymnasium and numpy only; no torch).

Observations, in the convention of Stable-Baselines3's `preprocess_obs`: a Box, Discrete, MultiDiscrete
or MultiBinary space is a *leaf*; a Dict or Tuple is walked down to its leaves, each named by its path
("image", "direction", "0.1", "sensors.depth"). A bare leaf at the top is the one entry
OBSERVATION_KEY. The agents read the flat Dict of leaves (`leaf_space`, `observation_leaves`); how each
leaf becomes a tensor the encoders read (one-hot, float, ...) is `nalu_rl.agents.observations`.
Text, Graph and Sequence spaces (and OneOf) have no fixed-size tensor form and are refused, naming the
entry and how to drop it.

Actions: Discrete (one categorical) or MultiDiscrete with a 1-D nvec (one categorical per component);
`ActionComponents` says their sizes and how a chosen index becomes the env's action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from nalu_rl.errors import InputError

OBSERVATION_KEY = "observation"
LEAF_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
DROP_ENTRY_HELP = (
    "drop it with an observation wrapper registered in an --import module "
    "(docs/EXTENDING.md, 'An observation entry nalu_rl cannot read')"
)


def _join(path: str, name: Any) -> str:
    return f"{path}.{name}" if path else str(name)


def observation_leaves(space: gymnasium.spaces.Space) -> dict[str, gymnasium.spaces.Space]:
    """The leaves of an observation space by path name, in the space's order (InputError naming the
    first entry that is not a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple)."""
    if isinstance(space, LEAF_SPACES):
        return {OBSERVATION_KEY: space}
    leaves: dict[str, gymnasium.spaces.Space] = {}

    def visit(entry: gymnasium.spaces.Space, path: str) -> None:
        if isinstance(entry, spaces.Dict):
            for key, child in entry.spaces.items():
                visit(child, _join(path, key))
        elif isinstance(entry, spaces.Tuple):
            for index, child in enumerate(entry.spaces):
                visit(child, _join(path, index))
        elif isinstance(entry, LEAF_SPACES):
            if path in leaves:
                raise InputError(f"observation entry {path!r} is named twice (a key with a '.' in it?)")
            leaves[path] = entry
        else:
            raise InputError(
                f"observation entry {path or OBSERVATION_KEY!r} is a {type(entry).__name__} space, which "
                f"has no fixed-size tensor form; {DROP_ENTRY_HELP}"
            )

    visit(space, "")
    if not leaves:
        raise InputError(f"the observation space {space} has no entries")
    return leaves


def leaf_space(space: gymnasium.spaces.Space) -> gymnasium.spaces.Dict:
    """The observation space as the flat Dict of its leaves that the agents read and rollouts hold
    (a Dict of leaves is returned as it is)."""
    if isinstance(space, spaces.Dict) and all(isinstance(entry, LEAF_SPACES) for entry in space.values()):
        return space
    return spaces.Dict(observation_leaves(space))


def observation_dict(observation: Any) -> dict[str, np.ndarray]:
    """An observation (of one env or a vector env) as the flat Dict of its leaves, named as
    `observation_leaves` names them: a dict is walked by key, a tuple by index, anything else is a leaf
    (a bare leaf at the top is OBSERVATION_KEY)."""
    if not isinstance(observation, (Mapping, tuple)):
        return {OBSERVATION_KEY: np.asarray(observation)}
    leaves: dict[str, np.ndarray] = {}

    def visit(entry: Any, path: str) -> None:
        if isinstance(entry, Mapping):
            for key, child in entry.items():
                visit(child, _join(path, key))
        elif isinstance(entry, tuple):
            for index, child in enumerate(entry):
                visit(child, _join(path, index))
        else:
            leaves[path] = np.asarray(entry)

    visit(observation, "")
    return leaves


@dataclass(frozen=True)
class ActionComponents:
    """An action space as categorical components: `sizes` (one per component) and `starts` (the env's
    value of index 0). `multi` is False for a Discrete space, whose actions are bare indices [N], and
    True for a MultiDiscrete one, whose actions carry the component axis [N, K]."""

    sizes: tuple[int, ...]
    starts: tuple[int, ...]
    multi: bool

    @property
    def action_sizes(self) -> int | tuple[int, ...]:
        """What the agents take as the actions' sizes: an int for Discrete, a tuple for MultiDiscrete."""
        return self.sizes if self.multi else self.sizes[0]

    def to_env(self, indices: np.ndarray) -> np.ndarray:
        """Chosen indices ([N] or [N, K]) as the env's actions (each shifted by its start)."""
        indices = np.asarray(indices, dtype=np.int64)
        if not any(self.starts):
            return indices
        return indices + (np.asarray(self.starts, dtype=np.int64) if self.multi else self.starts[0])


def action_components(space: gymnasium.spaces.Space) -> ActionComponents:
    """The categorical components of an action space (InputError for any space but Discrete and a
    MultiDiscrete with a 1-D nvec)."""
    if isinstance(space, spaces.Discrete):
        return ActionComponents((int(space.n),), (int(space.start),), multi=False)
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        return ActionComponents(
            tuple(int(n) for n in space.nvec), tuple(int(start) for start in space.start), multi=True
        )
    raise InputError(
        f"actions {space}: nalu_rl trains Discrete and MultiDiscrete actions only (a MultiDiscrete "
        "with a 1-D nvec); a continuous Box action needs a wrapper that discretises it"
    )
