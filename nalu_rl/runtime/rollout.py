"""Rollout buffers and the actor <-> learner hand-off.

An *unroll* is `unroll_length` steps of `num_envs` environments played by one actor with one
version of the policy. Unrolls live in preallocated buffers (shared memory when actors are
processes); only buffer indices travel between processes. The hand-off between actors and the
learner is two things only: a `RolloutBatch` (some unrolls stacked for one update) and the
weights with their version number (`WeightStore`). A backend that carries unrolls between
machines needs to provide the same two.

Time layout of one unroll (t = 0 .. T-1, T = unroll_length):
  obs[t], episode_start[t]   the observation the action at t was chosen on; obs[T] bootstraps.
  actions[t], behaviour_log_probs[t]   the action (its index per component: [N] for Discrete, [N, K]
                             for MultiDiscrete) and its log-probability under the actor's policy.
  rewards[t], terminated[t]  what the env returned for that action.
  ignored[t]                 the env ignored the action (NEXT_STEP autoreset after terminated[t-1]);
                             such steps are masked out of the loss.
  discounted_return[t]        the env's discounted return so far, r_t + gamma * (that at t-1), 0 at an
                             episode's start (the statistics of return normalisation).
  outcome[t], delay[t], episode_return[t]   an episode ended at t (outcome >= 0): SUCCESS_CODE or
                             OTHER_END_CODE, its delay (0 for an env without one) and its return.
  state                      the recurrent state before obs[0].
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import gymnasium
import numpy as np
import torch

NO_OUTCOME = -1
SUCCESS_CODE = 0  # an episode ended with info["success"] (or outcome "success")
OTHER_END_CODE = 1  # an episode ended otherwise


def buffer_dtype(dtype: np.dtype) -> torch.dtype:
    """The dtype an observation leaf is held in: uint8 (images) and bool as they are, other integers
    (Discrete, MultiDiscrete, MultiBinary) as int64, floats as float32."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return torch.uint8
    if dtype == np.bool_:
        return torch.bool
    return torch.int64 if np.issubdtype(dtype, np.integer) else torch.float32


@dataclasses.dataclass
class RolloutBatch:
    """Unrolls stacked along the env dimension: time-major tensors [T(+1), N, ...]."""

    obs: dict[str, torch.Tensor]
    episode_start: torch.Tensor
    actions: torch.Tensor
    behaviour_log_probs: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    ignored: torch.Tensor
    discounted_return: torch.Tensor
    outcome: torch.Tensor
    delay: torch.Tensor
    episode_return: torch.Tensor
    initial_state: tuple[torch.Tensor, ...]
    policy_versions: torch.Tensor

    @property
    def num_steps(self) -> int:
        """Environment steps held by the batch."""
        return int(self.rewards.numel())

    def to(self, device: str | torch.device) -> RolloutBatch:
        """The batch on `device` (copies are non-blocking from pinned memory)."""
        move = lambda tensor: tensor.to(device, non_blocking=True)  # noqa: E731
        return RolloutBatch(
            obs={key: move(value) for key, value in self.obs.items()},
            episode_start=move(self.episode_start),
            actions=move(self.actions),
            behaviour_log_probs=move(self.behaviour_log_probs),
            rewards=move(self.rewards),
            terminated=move(self.terminated),
            ignored=move(self.ignored),
            discounted_return=move(self.discounted_return),
            outcome=self.outcome,
            delay=self.delay,
            episode_return=self.episode_return,
            initial_state=tuple(move(part) for part in self.initial_state),
            policy_versions=self.policy_versions,
        )

    def columns(self, envs: torch.Tensor) -> RolloutBatch:
        """The batch of the env columns `envs` only: whole sequences, each with its stored initial
        recurrent state (a PPO minibatch)."""
        pick = lambda tensor: tensor.index_select(1, envs.to(tensor.device))  # noqa: E731
        return RolloutBatch(
            obs={key: pick(value) for key, value in self.obs.items()},
            episode_start=pick(self.episode_start),
            actions=pick(self.actions),
            behaviour_log_probs=pick(self.behaviour_log_probs),
            rewards=pick(self.rewards),
            terminated=pick(self.terminated),
            ignored=pick(self.ignored),
            discounted_return=pick(self.discounted_return),
            outcome=pick(self.outcome),
            delay=pick(self.delay),
            episode_return=pick(self.episode_return),
            initial_state=tuple(part.index_select(0, envs.to(part.device)) for part in self.initial_state),
            policy_versions=self.policy_versions,
        )


class RolloutBuffers:
    """`num_buffers` unroll slots allocated once, in shared memory when `shared` is True."""

    def __init__(
        self,
        observation_space: gymnasium.spaces.Dict,
        state_example: tuple[torch.Tensor, ...],
        unroll_length: int,
        num_envs: int,
        num_buffers: int,
        shared: bool = True,
        action_shape: tuple[int, ...] = (),
    ) -> None:
        """`action_shape` is () for Discrete actions, (K,) for K MultiDiscrete components."""
        length, envs = unroll_length, num_envs
        specs: dict[str, tuple[tuple[int, ...], torch.dtype]] = {
            "episode_start": ((length + 1, envs), torch.bool),
            "actions": ((length, envs, *action_shape), torch.int64),
            "behaviour_log_probs": ((length, envs), torch.float32),
            "rewards": ((length, envs), torch.float32),
            "terminated": ((length, envs), torch.bool),
            "ignored": ((length, envs), torch.bool),
            "discounted_return": ((length, envs), torch.float32),
            "outcome": ((length, envs), torch.int8),
            "delay": ((length, envs), torch.int32),
            "episode_return": ((length, envs), torch.float32),
        }
        for key, space in observation_space.spaces.items():
            specs[f"obs.{key}"] = ((length + 1, envs, *space.shape), buffer_dtype(space.dtype))
        for index, part in enumerate(state_example):
            specs[f"state.{index}"] = ((envs, *part.shape[1:]), part.dtype)
        self.unroll_length = unroll_length
        self.num_envs = num_envs
        self.num_buffers = num_buffers
        self.observation_keys = tuple(observation_space.spaces)
        self.num_state_parts = len(state_example)
        self.tensors: dict[str, torch.Tensor] = {}
        for key, (shape, dtype) in specs.items():
            tensor = torch.zeros((num_buffers, *shape), dtype=dtype)
            self.tensors[key] = tensor.share_memory_() if shared else tensor
        self.policy_versions = torch.zeros(num_buffers, dtype=torch.int64)
        if shared:
            self.policy_versions.share_memory_()

    def slot(self, index: int) -> dict[str, torch.Tensor]:
        """Views of buffer `index`, keyed like `tensors` (an actor writes its unroll through them)."""
        return {key: tensor[index] for key, tensor in self.tensors.items()}

    def batch(self, indices: list[int], pin_memory: bool = False) -> RolloutBatch:
        """Stack the unrolls in `indices` into one batch (a copy, so the slots can be reused at once).

        With `pin_memory` the copy lands in page-locked memory, so that `RolloutBatch.to("cuda")`
        overlaps the transfer with the host.
        """

        def stack(key: str, dim: int) -> torch.Tensor:
            tensor = self.tensors[key]
            if len(indices) == 1:
                stacked = tensor[indices[0]].clone()
            else:
                stacked = torch.cat([tensor[index] for index in indices], dim=dim)
            return stacked.pin_memory() if pin_memory else stacked

        return RolloutBatch(
            obs={key: stack(f"obs.{key}", 1) for key in self.observation_keys},
            episode_start=stack("episode_start", 1),
            actions=stack("actions", 1),
            behaviour_log_probs=stack("behaviour_log_probs", 1),
            rewards=stack("rewards", 1),
            terminated=stack("terminated", 1),
            ignored=stack("ignored", 1),
            discounted_return=stack("discounted_return", 1),
            outcome=stack("outcome", 1),
            delay=stack("delay", 1),
            episode_return=stack("episode_return", 1),
            initial_state=tuple(stack(f"state.{part}", 0) for part in range(self.num_state_parts)),
            policy_versions=self.policy_versions[indices].clone(),
        )


class WeightStore:
    """The latest policy weights in shared memory, with a version number actors compare against.

    One writer (the learner), many readers (the actors), no lock: the writer makes a sequence
    number odd while it copies and even when done, and a reader that saw it change or odd copies
    again. A reader killed at any moment therefore cannot block the learner.
    """

    def __init__(self, model: torch.nn.Module, context: Any) -> None:
        self.tensors = {
            key: value.detach().to("cpu", copy=True).share_memory_()
            for key, value in model.state_dict().items()
        }
        self.sequence = context.Value("q", 0, lock=False)

    @property
    def version(self) -> int:
        """Number of times weights were published."""
        return int(self.sequence.value) // 2

    def publish(self, model: torch.nn.Module) -> int:
        """Copy `model`'s weights into the store and return the new version number."""
        with torch.no_grad():
            self.sequence.value += 1
            for key, value in model.state_dict().items():
                self.tensors[key].copy_(value)
            self.sequence.value += 1
        return self.version

    def pull(self, model: torch.nn.Module, known_version: int) -> int:
        """Load the stored weights into `model` if newer than `known_version`; return the version it holds."""
        while True:
            before = int(self.sequence.value)
            if before // 2 == known_version and before % 2 == 0:
                return known_version
            if before % 2:
                time.sleep(0.0005)
                continue
            with torch.no_grad():
                model.load_state_dict(self.tensors)
            if int(self.sequence.value) == before:
                return before // 2
