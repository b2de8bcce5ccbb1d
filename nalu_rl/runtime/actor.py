"""Actors: play a vector env with a CPU copy of the policy and write unrolls into rollout buffers.

`Actor.unroll` plays the run's vector env with the one acting loop (`runtime/unroll.py`, which the
device runtime plays its tensor envs with too); the serial runtime (`--actors 0`), the actor
processes of the learner runtime and the hogwild workers all call it. `build_policy` is the one
place a worker builds its copy of the run's model.
"""

from __future__ import annotations

import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import gymnasium
import torch

from nalu_rl.runtime.rollout import RolloutBuffers, WeightStore
from nalu_rl.runtime.unroll import Unroller, VectorEnvTensors
from nalu_rl.runtime.workers import prepare_worker_process, retain_freed_memory

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


class Actor:
    """Steps `num_envs` environments of the run with `model` into rollout buffer slots (`Unroller`)."""

    def __init__(self, config: Any, model: torch.nn.Module, num_envs: int, seed: int) -> None:
        self.model = model
        env = VectorEnvTensors(config.environment().make_vector(num_envs), seed)
        self.unroller = Unroller(model, env, config.unroll_length, config.precision, seed, config.gamma)
        self.steps = 0

    @torch.inference_mode()
    def unroll(self, slot: dict[str, torch.Tensor]) -> None:
        """Play `unroll_length` steps of every env and write them into `slot` (a RolloutBuffers slot)."""
        unroller = self.unroller
        unroller.play(slot, tuple(slot[f"state.{index}"] for index in range(len(unroller.state))))
        self.steps += unroller.unroll_length * unroller.env.num_envs


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
