"""Random draws of the timing tasks that a single env and a vector env must make identically.

- `SingleEnvUniforms`: a single env's per-episode uniforms, drawn from its `np_random` in blocks of
  EPISODES_PER_DRAW episodes by `rules.draw_uniforms` (a vector env uses `rules.EnvUniformStreams`,
  one generator per env, drawing the same blocks).
- `step_uniforms`: uniforms that depend only on an episode's key and the step t (splitmix64 over
  uint64 arrays), so per-step randomness needs no generator call and no loop over envs.
"""

from __future__ import annotations

import numpy as np

from nalu_rl.envs.rules import EPISODES_PER_DRAW, UNIFORMS_PER_EPISODE, draw_uniforms

KEY_BITS = 53
"""Bits of an episode key: those of a float64 uniform, so a key is `floor(u * 2**53)`."""
_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


class SingleEnvUniforms:
    """The per-episode uniforms of one env, drawn from the generator it is given in blocks of
    EPISODES_PER_DRAW episodes; a different generator (a seeded reset) starts a new block."""

    def __init__(self) -> None:
        self.block = np.zeros((0, UNIFORMS_PER_EPISODE))
        self.used = 0
        self.rng: np.random.Generator | None = None

    def next(self, rng: np.random.Generator) -> np.ndarray:
        """The next episode's row of uniforms, shape (1, UNIFORMS_PER_EPISODE)."""
        if rng is not self.rng or self.used == EPISODES_PER_DRAW:
            self.block = draw_uniforms(rng)
            self.rng = rng
            self.used = 0
        row = self.block[self.used : self.used + 1]
        self.used += 1
        return row


def episode_keys(uniforms: np.ndarray) -> np.ndarray:
    """Episode keys (uint64, KEY_BITS bits) from uniforms in [0, 1)."""
    return (uniforms * float(2**KEY_BITS)).astype(np.uint64)


def splitmix64(key: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """Output number `counter` of the splitmix64 generator seeded `key` (uint64 arrays, any shape;
    arithmetic wraps modulo 2**64)."""
    z = key + (counter.astype(np.uint64) + np.uint64(1)) * _GOLDEN_GAMMA
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


def step_uniforms(key: np.ndarray, t: np.ndarray) -> np.ndarray:
    """A uniform in [0, 1) per element, a fixed function of (episode key, step t): the same in every
    env that plays that episode, and independent across steps and keys."""
    return (splitmix64(key, t) >> np.uint64(11)).astype(np.float64) * 2.0**-53
