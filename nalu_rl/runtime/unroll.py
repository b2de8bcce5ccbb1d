"""The one acting loop: a policy plays an env that steps a batch and returns tensors, one unroll at a time.

`Unroller.play` is the unroll of every runtime: the CPU actors (`runtime/actor.py`, over a Gymnasium
vector env seen through `VectorEnvTensors`) and the device runtime (`runtime/device.py`, over a
`TimingTensorEnv` on the learner's device). It writes the time layout of `nalu_rl.runtime.rollout`
(obs[t] the observation the action at t was chosen on, obs[T] bootstraps; ignored[t] marks the step
an autoreset ignored); observations and recurrent state carry across unrolls.

An env it plays (`TensorStepEnv`) has `num_envs` and `device`, `reset() -> observations` and
`step(actions) -> (observations, reward, terminated, outcome)`: observations a dict of tensors
[num_envs, ...]; reward [num_envs] (float32, or the dtype the env gives); terminated bool, True where
an episode ended at this step (never on a step an autoreset ignored); outcome int8, `SUCCESS` of
`nalu_rl.envs.rules` where the episode that ended succeeded. After a step its `delay` holds each
env's delay (int), or None where the env knows that no episode ended (then the batch's delay and
episode_return at that step are not written: they are read only where an episode ended).
"""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium
import numpy as np
import torch

from nalu_rl.agents import distributions
from nalu_rl.environment import ended_episodes, observation_dict
from nalu_rl.envs.rules import SUCCESS
from nalu_rl.precision import autocast
from nalu_rl.runtime.rollout import NO_OUTCOME, OTHER_END_CODE, SUCCESS_CODE
from nalu_rl.spaces import action_components

Observation = dict[str, torch.Tensor]


class TensorStepEnv(Protocol):
    """An env of `num_envs` episodes stepped together, in tensors on `device` (see the module docstring)."""

    num_envs: int
    device: torch.device
    delay: torch.Tensor | None

    def reset(self) -> Observation: ...

    def step(self, actions: torch.Tensor) -> tuple[Observation, torch.Tensor, torch.Tensor, torch.Tensor]: ...


def _tensors(observation: Any) -> Observation:
    return {key: torch.as_tensor(value) for key, value in observation_dict(observation).items()}


class VectorEnvTensors:
    """A Gymnasium vector env (NEXT_STEP autoreset) with the tensor env's step: actions in and
    observations, reward, terminated and outcome out as CPU tensors; reset with `seed`.

    A truncated episode (an env's time limit) ends like a terminated one: no value bootstraps past it
    (a simplification; TimeTrack and IntervalTiming never truncate). An episode's success and delay
    are read from its infos (`nalu_rl.environment.ended_episodes`).
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, seed: int) -> None:
        self.env = env
        self.seed = seed
        self.num_envs = env.num_envs
        self.device = torch.device("cpu")
        self.action_components = action_components(env.single_action_space)
        self.action_ignored = np.zeros(env.num_envs, dtype=bool)
        self.delay: torch.Tensor | None = None

    def reset(self) -> Observation:
        """Start an episode in every env (seeded `seed`); the first observations."""
        observation, _ = self.env.reset(seed=self.seed)
        self.action_ignored[:] = False
        return _tensors(observation)

    def step(self, actions: torch.Tensor) -> tuple[Observation, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Step every env with `actions` (the policy's indices); see the module docstring."""
        observation, reward, terminated, truncated, info = self.env.step(
            self.action_components.to_env(actions.numpy())
        )
        ended = (np.asarray(terminated) | np.asarray(truncated)) & ~self.action_ignored
        # The step after an episode ended is ignored by the env's autoreset.
        self.action_ignored = ended
        outcome = np.full(len(ended), NO_OUTCOME, dtype=np.int8)
        self.delay = None
        if ended.any():
            success, delay = ended_episodes(info, ended)
            outcome[success] = SUCCESS
            self.delay = torch.as_tensor(delay)
        reward = np.asarray(reward)
        # An integer reward adds to the running return in float64, as numpy would add it.
        reward = reward if reward.dtype.kind == "f" else reward.astype(np.float64)
        tensors = torch.as_tensor(reward), torch.as_tensor(ended), torch.as_tensor(outcome)
        return _tensors(observation), *tensors


class Unroller:
    """Plays `env` with `model` (actions sampled from `seed`'s generator on the env's device), at
    `precision`, `unroll_length` steps per `play`; `gamma` discounts the returns it records."""

    def __init__(
        self,
        model: torch.nn.Module,
        env: TensorStepEnv,
        unroll_length: int,
        precision: str,
        seed: int,
        gamma: float,
    ) -> None:
        self.model = model
        self.env = env
        self.unroll_length = unroll_length
        self.precision = precision
        self.gamma = gamma
        device, envs = env.device, env.num_envs
        self.observation = env.reset()
        self.state = model.initial_state(envs, device)
        self.episode_start = torch.ones(envs, dtype=torch.bool, device=device)
        self.action_ignored = torch.zeros(envs, dtype=torch.bool, device=device)
        self.running_return = torch.zeros(envs, dtype=torch.float32, device=device)
        self.running_discounted_return = torch.zeros(envs, dtype=torch.float32, device=device)
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(seed)

    def play(self, slot: dict[str, torch.Tensor], initial_state: tuple[torch.Tensor, ...]) -> None:
        """Play one unroll of every env into `slot` (tensors keyed as `unroll_tensor_specs` keys them)
        and the recurrent state before it into `initial_state`. The caller chooses the grad mode."""
        env, model = self.env, self.model
        for saved, part in zip(initial_state, self.state, strict=True):
            saved.copy_(part)
        for t in range(self.unroll_length):
            for key, value in self.observation.items():
                slot[f"obs.{key}"][t].copy_(value)
            slot["episode_start"][t].copy_(self.episode_start)
            step_observation = {key: value.unsqueeze(0) for key, value in self.observation.items()}
            with autocast(self.precision, env.device):
                logits, _, self.state = model(step_observation, self.episode_start.unsqueeze(0), self.state)
            step_logits, sizes = logits[0].float(), model.num_actions
            actions = distributions.sample(step_logits, sizes, generator=self.generator)
            slot["actions"][t].copy_(actions)
            slot["behaviour_log_probs"][t].copy_(distributions.log_prob(step_logits, actions, sizes))

            observation, reward, terminated, outcome = env.step(actions)
            slot["rewards"][t].copy_(reward)
            slot["terminated"][t].copy_(terminated)
            slot["ignored"][t].copy_(self.action_ignored)
            self.running_return += reward
            self.running_discounted_return.mul_(self.gamma).add_(slot["rewards"][t])
            slot["discounted_return"][t].copy_(self.running_discounted_return)
            self.running_discounted_return.masked_fill_(terminated, 0.0)
            ended_code = torch.where(outcome == SUCCESS, SUCCESS_CODE, OTHER_END_CODE)
            slot["outcome"][t].copy_(torch.where(terminated, ended_code, NO_OUTCOME))
            if env.delay is not None:
                slot["delay"][t].copy_(env.delay)
                slot["episode_return"][t].copy_(self.running_return)
            self.running_return.masked_fill_(terminated, 0.0)
            # The observation after an ignored (autoreset) step is the first of a new episode.
            self.episode_start = self.action_ignored
            self.action_ignored = terminated
            self.observation = observation
        for key, value in self.observation.items():
            slot[f"obs.{key}"][self.unroll_length].copy_(value)
        slot["episode_start"][self.unroll_length].copy_(self.episode_start)
