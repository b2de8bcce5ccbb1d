"""Starting episodes in the envs whose episodes live in an episode batch (`_batch`, with
`start(envs, uniforms, delay)` and `advance(actions)`): one env (a batch of one) or every env of a
vector env, each with the delay a reset's `options["delay"]` asks for, and a vector env's step with
its autoreset. The gridworlds and the cue tasks start and restart them alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from nalu_rl.envs.arguments import requested_delay
from nalu_rl.envs.draws import SingleEnvUniforms
from nalu_rl.envs.rules import NO_OUTCOME, EnvUniformStreams


class SingleEpisodeStart:
    """For a single env over a batch of one: its per-episode draws and whether it must be reset."""

    def _init_episode_start(self) -> None:
        self._uniforms = SingleEnvUniforms()
        self._outcome = ""
        self._needs_reset = True

    def _start_episode(self, options: dict[str, Any] | None) -> None:
        """Begin an episode: T from `delay_range` or `options["delay"]`, the next episode's draws."""
        delay = requested_delay(options, self.config.checked_delay)
        self._batch.start(slice(None), self._uniforms.next(self.np_random), delay)
        self._outcome = ""
        self._needs_reset = False


class VectorEpisodeStart:
    """For a vector env over a batch of `num_envs`: one generator per env, the envs whose episode
    ended on the last step and the outcome code of each."""

    def _init_episode_start(self, num_envs: int) -> None:
        self._uniforms: EnvUniformStreams | None = None
        self._episode_ended = np.zeros(num_envs, dtype=bool)
        self._all_envs = np.arange(num_envs)
        self._all_true = np.ones(num_envs, dtype=bool)
        self._outcome_code = np.full(num_envs, NO_OUTCOME, dtype=np.int8)

    def _start_every_episode(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """Begin an episode in every env; env i is seeded `seed + i` (seed None on a fresh env: each
        env takes fresh entropy, as a single env would); `options["delay"]` fixes T for all."""
        if seed is not None or self._uniforms is None:
            self._uniforms = EnvUniformStreams(self.num_envs, seed)
        delay = requested_delay(options, self.config.checked_delay)
        self._batch.start(self._all_envs, self._uniforms.next(self._all_envs), delay)
        self._episode_ended[:] = False
        self._outcome_code[:] = NO_OUTCOME

    def _advance_every_env(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of every env (`_batch.advance`), where an env whose episode ended on the last step
        starts its next episode instead (next-step autoreset: reward 0, not terminated, no outcome).
        Returns (reward, terminated, outcome code) of the step."""
        reward, terminated, outcome = self._batch.advance(actions)
        restart_envs = np.flatnonzero(self._episode_ended)
        if len(restart_envs):
            self._batch.start(restart_envs, self._uniforms.next(restart_envs))
            reward[restart_envs] = 0.0
            terminated[restart_envs] = False
            outcome[restart_envs] = NO_OUTCOME
        self._episode_ended = terminated
        self._outcome_code = outcome
        return reward, terminated, outcome
