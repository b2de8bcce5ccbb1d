"""Measures of scripts/bench_train.py (a module of it, not a command): one quiet training run, and
samples/s of the learner's updates alone, on the packages of the revision that runs them."""

from __future__ import annotations

import contextlib
import io
import time
from typing import Any

import torch

from nalu_rl import train


def training_run(argv: list[str]) -> Any:
    """One quiet training run (no progress bar, no evaluation, no stop on success)."""
    with contextlib.redirect_stderr(io.StringIO()):
        return train.run_training(argv)


def learner_class() -> type:
    """The update's `Learner` of the revision at hand (older revisions kept it in the learner runtime's
    module, and before the runtime room in nalu_rl/learner.py)."""
    try:
        from nalu_rl.runtime.update import Learner
    except ImportError:
        try:
            from nalu_rl.runtime.learner import Learner
        except ImportError:
            from nalu_rl.learner import Learner
    return Learner


def learner_samples_per_second(
    agent: str, obs: str, device: str, envs: int, unroll: int, updates: int, precision: str | None = None
) -> float:
    """Samples/s of learner updates alone, on a batch of random-looking but valid unrolls."""
    from nalu_rl.envs import TimeTrackVectorEnv

    try:  # revisions before the runtime room kept these modules in nalu_rl/ itself
        from nalu_rl.runtime.actor import Actor
        from nalu_rl.runtime.rollout import RolloutBuffers
        from nalu_rl.runtime.workers import retain_freed_memory
    except ImportError:
        from nalu_rl.actor import Actor
        from nalu_rl.learner import retain_freed_memory
        from nalu_rl.rollout import RolloutBuffers
    from nalu_rl.config import Config

    Learner = learner_class()

    retain_freed_memory()  # as the learner runtime does
    # Without `precision` the code's default applies (revisions older than --precision lack it).
    chosen = {} if precision is None else {"precision": precision}
    config = Config(agent=agent, obs=obs, envs_per_actor=envs, unroll_length=unroll, **chosen)
    space = TimeTrackVectorEnv(1, **config.env_kwargs()).single_observation_space
    from nalu_rl.agents import make_agent

    acting = make_agent(agent, space).eval()
    buffers = RolloutBuffers(space, acting.initial_state(envs), unroll, envs, 1, shared=False)
    Actor(config, acting, envs, seed=0).unroll(buffers.slot(0))
    model = make_agent(agent, space).to(device)
    learner = Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), config)
    batch = buffers.batch([0], pin_memory=device == "cuda").to(device)
    return timed_updates(learner, batch, updates, device)


def timed_updates(learner: Any, batch: Any, updates: int, device: str) -> float:
    """Samples/s of `updates` learner updates on one batch, after one untimed warm-up update."""
    learner.update(batch)
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(updates):
        learner.update(batch)
    if device == "cuda":
        torch.cuda.synchronize()
    return updates * batch.num_steps / (time.perf_counter() - started)


def device_learner_samples_per_second(
    agent: str, obs: str, device: str, envs: int, updates: int, precision: str | None = None
) -> float:
    """Samples/s of learner updates alone on one unroll of `envs` tensor envs played on `device`."""
    from nalu_rl.agents import make_agent
    from nalu_rl.config import Config
    from nalu_rl.runtime.device import DeviceActor
    from nalu_rl.runtime.device_env import make_tensor_env

    Learner = learner_class()

    chosen = {} if precision is None else {"precision": precision}
    config = Config(agent=agent, obs=obs, runtime="device", device=device, **chosen)
    env = make_tensor_env(config, envs, device, seed=0)
    model = make_agent(agent, env.single_observation_space).to(device)
    batch = DeviceActor(model, env, config.unroll_length, config.precision, seed=0).unroll()
    learner = Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), config)
    return timed_updates(learner, batch, updates, device)


def precision_options(precision: str | None) -> list[str]:
    """The training option that sets `precision`; none for the code's default."""
    return [] if precision is None else ["--precision", precision]
