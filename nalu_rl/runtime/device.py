"""The device runtime (`--runtime device`): the timing tasks, the policy and the learner on one device.

One process. A `TimingTensorEnv` lives on the learner's device (`--device cuda` or `cpu`), with as
many envs as one batch of the learner runtime holds (`device_env_count`: `--actors` x
`--envs-per-actor`, so that an update sees the batch the agents' settings were measured with);
`DeviceActor.unroll` plays `--unroll-length` steps of them with the
run's own model into rollout tensors on the same device, and `Learner.update` learns from them as
they are: no observation leaves the device, and every unroll is played with the newest weights
(policy lag 0). Only the results of the episodes that ended (delay, success, return) go to the host,
once per unroll, for the run's success window.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import torch

from nalu_rl.agents import distributions
from nalu_rl.envs.rules import SUCCESS
from nalu_rl.precision import autocast
from nalu_rl.runtime.device_env import DeviceUniforms, TimingTensorEnv, make_tensor_env
from nalu_rl.runtime.rollout import (
    NO_OUTCOME,
    OTHER_END_CODE,
    SUCCESS_CODE,
    RolloutBatch,
    unroll_tensor_specs,
)
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.update import Learner


class DeviceActor:
    """Plays a tensor env with `model` into rollout tensors on the env's device, one unroll at a time.

    The time layout is that of `nalu_rl.runtime.rollout` (obs[t] the observation the action at t was
    chosen on, obs[T] bootstraps; ignored[t] marks the step an autoreset ignored); observations and
    recurrent state carry across unrolls. The tensors are reused: a batch is valid until the next unroll.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        env: TimingTensorEnv,
        unroll_length: int,
        precision: str,
        seed: int,
        gamma: float = 0.99,
    ) -> None:
        self.model = model
        self.gamma = gamma
        self.env = env
        self.unroll_length = unroll_length
        self.precision = precision
        device, envs = env.device, env.num_envs
        specs = unroll_tensor_specs(env.single_observation_space, unroll_length, envs)
        # The unroll's tensors, keyed as a RolloutBuffers slot is, written in place by each unroll.
        self.slot = {
            key: torch.zeros(shape, dtype=dtype, device=device) for key, (shape, dtype) in specs.items()
        }
        self.state = model.initial_state(envs, device)
        self.initial_state = tuple(torch.zeros_like(part) for part in self.state)
        self.observation = env.reset()
        self.episode_start = torch.ones(envs, dtype=torch.bool, device=device)
        self.action_ignored = torch.zeros(envs, dtype=torch.bool, device=device)
        self.running_return = torch.zeros(envs, dtype=torch.float32, device=device)
        self.running_discounted_return = torch.zeros(envs, dtype=torch.float32, device=device)
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(seed)
        self.policy_versions = torch.zeros(1, dtype=torch.int64)

    @torch.no_grad()
    def unroll(self) -> RolloutBatch:
        """Play `unroll_length` steps of every env; the unroll as a batch of tensors on the device."""
        self.model.eval()
        slot = self.slot
        for saved, part in zip(self.initial_state, self.state, strict=True):
            saved.copy_(part)
        for t in range(self.unroll_length):
            for key, value in self.observation.items():
                slot[f"obs.{key}"][t].copy_(value)
            slot["episode_start"][t].copy_(self.episode_start)
            step_observation = {key: value.unsqueeze(0) for key, value in self.observation.items()}
            with autocast(self.precision, self.env.device):
                logits, _, self.state = self.model(
                    step_observation, self.episode_start.unsqueeze(0), self.state
                )
            step_logits, sizes = logits[0].float(), self.model.num_actions
            actions = distributions.sample(step_logits, sizes, generator=self.generator)
            slot["actions"][t].copy_(actions)
            slot["behaviour_log_probs"][t].copy_(distributions.log_prob(step_logits, actions, sizes))

            observation, reward, terminated, outcome = self.env.step(actions)
            # The env reports no termination on the step an autoreset ignored.
            slot["rewards"][t].copy_(reward)
            slot["terminated"][t].copy_(terminated)
            slot["ignored"][t].copy_(self.action_ignored)
            self.running_return += reward
            self.running_discounted_return.mul_(self.gamma).add_(reward)
            slot["discounted_return"][t].copy_(self.running_discounted_return)
            self.running_discounted_return.masked_fill_(terminated, 0.0)
            ended_code = torch.where(outcome == SUCCESS, SUCCESS_CODE, OTHER_END_CODE)
            slot["outcome"][t].copy_(torch.where(terminated, ended_code, NO_OUTCOME))
            slot["delay"][t].copy_(self.env.delay)
            slot["episode_return"][t].copy_(self.running_return)
            self.running_return.masked_fill_(terminated, 0.0)
            # The observation after an ignored (autoreset) step is the first of a new episode.
            self.episode_start = self.action_ignored
            self.action_ignored = terminated
            self.observation = observation
        for key, value in self.observation.items():
            slot[f"obs.{key}"][self.unroll_length].copy_(value)
        slot["episode_start"][self.unroll_length].copy_(self.episode_start)
        return RolloutBatch.from_tensors(slot, self.initial_state, self.policy_versions)


def record_unroll(run: TrainingRun, batch: RolloutBatch) -> None:
    """Count an unroll's steps and bring the episodes that ended in it to the host for the window."""
    run.record_steps(batch.num_steps, *batch.ended_episodes())


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Within the block, torch computes on the CPU with `count` threads."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def device_env_count(config: Any) -> int:
    """The envs the device runtime steps: those of one learner-runtime batch, --actors x
    --envs-per-actor (with --actors 0, --batch-unrolls x --envs-per-actor)."""
    return (config.actors or config.batch_unrolls) * config.envs_per_actor


def train_device(run: TrainingRun, uniforms: Any = DeviceUniforms) -> None:
    """Train `run.model` with the device runtime until `run.should_stop()` (see the module docstring).

    On the CPU the unroll runs on one thread, as an actor process of the learner runtime does: its
    operations are small (one step of the batch), and a pool of threads only waits on itself,
    badly so on busy cores; the update runs on the learner's threads.
    """
    config = run.config
    env = make_tensor_env(config, device_env_count(config), run.device, run.next_seed(), uniforms)
    actor = DeviceActor(
        run.model, env, config.unroll_length, config.precision, run.next_seed(), gamma=config.gamma
    )
    learner = Learner(run.model, run.optimizer, config, run.reward_normalizer)
    acting_threads = 1 if run.device.type == "cpu" else torch.get_num_threads()
    no_lag = torch.zeros(1, dtype=torch.int64)
    while not run.should_stop():
        started = time.perf_counter()
        with torch_threads(acting_threads):
            batch = actor.unroll()
        record_unroll(run, batch)
        acted = time.perf_counter()
        run.add_busy_time("actor", acted - started)
        run.record_update(learner.update(batch, run.regularizer_steps(), config.entropy_coef_at(run.steps)))
        run.record_policy_lag(no_lag)
        run.add_busy_time("learner", time.perf_counter() - acted)
