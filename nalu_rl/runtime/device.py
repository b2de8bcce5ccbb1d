"""The device runtime (`--runtime device`): the timing tasks, the policy and the learner on one device.

One process. A `TimingTensorEnv` lives on the learner's device (`--device cuda` or `cpu`), with as
many envs as one batch of the learner runtime holds (`device_env_count`: `--actors` x
`--envs-per-actor`, so that an update sees the batch the agents' settings were measured with);
`DeviceActor.unroll` plays `--unroll-length` steps of them with the run's own model (with the acting
loop of the CPU actors, `runtime/unroll.py`) into rollout tensors on the same device, and
`Learner.update` learns from them as they are: no observation leaves the device, and every unroll is
played with the newest weights (policy lag 0). Only the results of the episodes that ended (delay,
success, return) go to the host, once per unroll, for the run's success window.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import torch

from nalu_rl.runtime.device_env import DeviceUniforms, TimingTensorEnv, make_tensor_env
from nalu_rl.runtime.rollout import RolloutBatch, unroll_tensor_specs
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.unroll import Unroller
from nalu_rl.runtime.update import Learner


class DeviceActor:
    """Plays a tensor env with `model` into rollout tensors on the env's device, one unroll at a time
    (`Unroller`). The tensors are reused: a batch is valid until the next unroll."""

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
        self.unroller = Unroller(model, env, unroll_length, precision, seed, gamma)
        specs = unroll_tensor_specs(env.single_observation_space, unroll_length, env.num_envs)
        # The unroll's tensors, keyed as a RolloutBuffers slot is, written in place by each unroll.
        self.slot = {
            key: torch.zeros(shape, dtype=dtype, device=env.device) for key, (shape, dtype) in specs.items()
        }
        self.initial_state = tuple(torch.zeros_like(part) for part in self.unroller.state)
        self.policy_versions = torch.zeros(1, dtype=torch.int64)

    @torch.no_grad()
    def unroll(self) -> RolloutBatch:
        """Play `unroll_length` steps of every env; the unroll as a batch of tensors on the device."""
        self.model.eval()
        self.unroller.play(self.slot, self.initial_state)
        return RolloutBatch.from_tensors(self.slot, self.initial_state, self.policy_versions)


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
        run.record_batch(batch)
        acted = time.perf_counter()
        run.add_busy_time("actor", acted - started)
        run.record_update(learner.update(batch, *run.update_schedule()))
        run.record_policy_lag(no_lag)
        run.add_busy_time("learner", time.perf_counter() - acted)
