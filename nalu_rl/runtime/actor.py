"""Actors: play a vector env with a CPU copy of the policy and write unrolls into rollout buffers.

`Actor.unroll` is the one piece of acting code; the serial runtime (`--actors 0`), the actor
processes of the learner runtime and the hogwild workers all call it. `build_policy` is the one
place a worker builds its copy of the run's model.
"""

from __future__ import annotations

import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
import torch

from nalu_rl.agents import distributions
from nalu_rl.environment import ended_episodes, observation_dict
from nalu_rl.precision import autocast
from nalu_rl.runtime.rollout import NO_OUTCOME, OTHER_END_CODE, SUCCESS_CODE, RolloutBuffers, WeightStore
from nalu_rl.runtime.workers import prepare_worker_process, retain_freed_memory
from nalu_rl.spaces import action_components

if TYPE_CHECKING:
    from nalu_rl.agents import ActorCritic, Wiring


def environment_spaces(config: Any) -> tuple[gymnasium.spaces.Dict, int | tuple[int, ...]]:
    """The observation space of one environment of the run, as the flat Dict of leaves the agents read
    (and the rollout buffers hold), and its actions' sizes (`RunEnvironment.spaces`)."""
    with config.environment() as environment:
        return environment.spaces()


def build_policy(config: Any, wiring: Wiring) -> ActorCritic:
    """An untrained ActorCritic with `wiring` for the environment of `config` (weights come later,
    from the weight store or a shared model)."""
    from nalu_rl.agents import ActorCritic

    observation_space, num_actions = environment_spaces(config)
    return ActorCritic(observation_space, num_actions, wiring, name=config.agent)


def _tensors(observation: Any) -> dict[str, torch.Tensor]:
    return {key: torch.as_tensor(value) for key, value in observation_dict(observation).items()}


class Actor:
    """Steps `num_envs` environments with `model`; observations and recurrent state carry across unrolls."""

    def __init__(self, config: Any, model: torch.nn.Module, num_envs: int, seed: int) -> None:
        self.model = model
        self.precision = config.precision  # of the acting forward pass, resolved for the CPU
        self.unroll_length = config.unroll_length
        self.env = config.environment().make_vector(num_envs)
        self.action_components = action_components(self.env.single_action_space)
        observation, _ = self.env.reset(seed=seed)
        self.observation = _tensors(observation)
        self.episode_start = torch.ones(num_envs, dtype=torch.bool)
        self.action_ignored = np.zeros(num_envs, dtype=bool)
        self.state = model.initial_state(num_envs)
        self.running_return = np.zeros(num_envs, dtype=np.float32)
        self.gamma = config.gamma
        self.discounted_return = np.zeros(num_envs, dtype=np.float32)
        self.generator = torch.Generator().manual_seed(seed)
        self.steps = 0

    @torch.inference_mode()
    def unroll(self, slot: dict[str, torch.Tensor]) -> None:
        """Play `unroll_length` steps of every env and write them into `slot` (a RolloutBuffers slot)."""
        for index, part in enumerate(self.state):
            slot[f"state.{index}"].copy_(part)
        for t in range(self.unroll_length):
            for key, value in self.observation.items():
                slot[f"obs.{key}"][t].copy_(value)
            slot["episode_start"][t].copy_(self.episode_start)
            step_observation = {key: value.unsqueeze(0) for key, value in self.observation.items()}
            with autocast(self.precision, "cpu"):
                logits, _, self.state = self.model(
                    step_observation, self.episode_start.unsqueeze(0), self.state
                )
            step_logits = logits[0].float()
            sizes = self.model.num_actions
            actions = distributions.sample(step_logits, sizes, generator=self.generator)
            slot["actions"][t].copy_(actions)
            slot["behaviour_log_probs"][t].copy_(distributions.log_prob(step_logits, actions, sizes))

            env_actions = self.action_components.to_env(actions.numpy())
            observation, reward, terminated, truncated, info = self.env.step(env_actions)
            # A truncated episode (an env's time limit) ends like a terminated one: no value
            # bootstraps past it (a simplification; TimeTrack and IntervalTiming never truncate).
            ended = (np.asarray(terminated) | np.asarray(truncated)) & ~self.action_ignored
            slot["rewards"][t].copy_(torch.as_tensor(np.asarray(reward, dtype=np.float32)))
            slot["terminated"][t].copy_(torch.as_tensor(ended))
            slot["ignored"][t].copy_(torch.as_tensor(self.action_ignored))
            self.running_return += reward
            self.discounted_return = self.discounted_return * self.gamma + np.asarray(reward, np.float32)
            slot["discounted_return"][t].copy_(torch.as_tensor(self.discounted_return))
            self.discounted_return[ended] = 0.0
            outcome = np.full(len(ended), NO_OUTCOME, dtype=np.int8)
            if ended.any():
                success, delay = ended_episodes(info, ended)
                outcome[ended] = np.where(success[ended], SUCCESS_CODE, OTHER_END_CODE)
                slot["delay"][t].copy_(torch.as_tensor(delay.astype(np.int32)))
                slot["episode_return"][t].copy_(torch.as_tensor(self.running_return))
                self.running_return[ended] = 0.0
            slot["outcome"][t].copy_(torch.as_tensor(outcome))
            # The observation after an ignored (autoreset) step is the first of a new episode.
            self.episode_start = torch.as_tensor(self.action_ignored.copy())
            self.action_ignored = ended.copy()
            self.observation = _tensors(observation)
        for key, value in self.observation.items():
            slot[f"obs.{key}"][self.unroll_length].copy_(value)
        slot["episode_start"][self.unroll_length].copy_(self.episode_start)
        self.steps += self.unroll_length * len(self.action_ignored)


def actor_process(
    actor_id: int,
    config_dict: dict[str, Any],
    wiring: Wiring,
    seed: int,
    buffers: RolloutBuffers,
    weights: WeightStore,
    link: Connection,
    busy_seconds: Any,
    stop: Any,
) -> None:
    """Entry point of an actor process: receive a free buffer index, fill it, send it back; repeat."""
    from nalu_rl.config import Config
    from nalu_rl.plugins import import_modules

    prepare_worker_process()
    retain_freed_memory()
    config = Config.from_dict(config_dict)
    import_modules(config.imports)
    model = build_policy(config, wiring).eval()
    version = weights.pull(model, -1)
    actor = Actor(config, model, buffers.num_envs, seed)
    try:
        while not stop.is_set():
            if not link.poll(0.2):
                continue
            index = link.recv()
            if index is None:
                break
            started = time.perf_counter()
            version = weights.pull(model, version)
            buffers.policy_versions[index] = version
            actor.unroll(buffers.slot(index))
            busy_seconds[actor_id] += time.perf_counter() - started
            link.send(index)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
