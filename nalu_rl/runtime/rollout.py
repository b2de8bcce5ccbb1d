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
from collections.abc import Callable
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


def unroll_tensor_specs(
    observation_space: gymnasium.spaces.Dict,
    unroll_length: int,
    num_envs: int,
    action_shape: tuple[int, ...] = (),
) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """The shape and dtype of each time-major tensor of one unroll ([T(+1), N, ...]), keyed by its
    `RolloutBatch` field, each observation leaf as "obs.<key>". `action_shape` is () for Discrete
    actions, (K,) for K MultiDiscrete components."""
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
    return specs


# The time-major fields of a batch besides the observations, in the order of `RolloutBatch`.
STEP_FIELDS = (
    "episode_start",
    "actions",
    "behaviour_log_probs",
    "rewards",
    "terminated",
    "ignored",
    "discounted_return",
    "outcome",
    "delay",
    "episode_return",
)
# What only the host reads (the run's accounting of steps and episodes): `RolloutBatch.to` leaves it.
HOST_FIELDS = ("outcome", "delay", "episode_return", "policy_versions")


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

    @classmethod
    def from_tensors(
        cls,
        tensors: dict[str, torch.Tensor],
        initial_state: tuple[torch.Tensor, ...],
        policy_versions: torch.Tensor,
    ) -> RolloutBatch:
        """The batch of time-major `tensors` keyed as `unroll_tensor_specs` keys them."""
        return cls(
            obs={key[len("obs.") :]: value for key, value in tensors.items() if key.startswith("obs.")},
            initial_state=initial_state,
            policy_versions=policy_versions,
            **{name: tensors[name] for name in STEP_FIELDS},
        )

    @property
    def num_steps(self) -> int:
        """Environment steps held by the batch."""
        return int(self.rewards.numel())

    def ended_episodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The episodes that ended in the batch, on the host: their delays, whether each succeeded
        and their returns."""
        ended = self.outcome >= 0
        return (
            self.delay[ended].cpu().numpy(),
            (self.outcome[ended] == SUCCESS_CODE).cpu().numpy(),
            self.episode_return[ended].cpu().numpy(),
        )

    def to(self, device: str | torch.device) -> RolloutBatch:
        """The batch on `device` (copies are non-blocking from pinned memory); what only the host
        reads (`HOST_FIELDS`) stays where it is."""
        move = lambda tensor: tensor.to(device, non_blocking=True)  # noqa: E731
        return self._mapped(move, move, keep=HOST_FIELDS)

    def columns(self, envs: torch.Tensor) -> RolloutBatch:
        """The batch of the env columns `envs` only: whole sequences, each with its stored initial
        recurrent state (a PPO minibatch)."""
        pick = lambda tensor: tensor.index_select(1, envs.to(tensor.device))  # noqa: E731
        pick_state = lambda part: part.index_select(0, envs.to(part.device))  # noqa: E731
        return self._mapped(pick, pick_state, keep=("policy_versions",))

    def _mapped(
        self,
        step_tensor: Callable[[torch.Tensor], torch.Tensor],
        state_part: Callable[[torch.Tensor], torch.Tensor],
        keep: tuple[str, ...],
    ) -> RolloutBatch:
        """The batch with `step_tensor` applied to each time-major tensor (observations included) and
        `state_part` to each part of the initial state, the fields in `keep` as they are."""
        return RolloutBatch(
            obs={key: step_tensor(value) for key, value in self.obs.items()},
            initial_state=tuple(state_part(part) for part in self.initial_state),
            policy_versions=self.policy_versions,
            **{
                name: getattr(self, name) if name in keep else step_tensor(getattr(self, name))
                for name in STEP_FIELDS
            },
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
        specs = unroll_tensor_specs(observation_space, unroll_length, num_envs, action_shape)
        for index, part in enumerate(state_example):
            specs[f"state.{index}"] = ((num_envs, *part.shape[1:]), part.dtype)
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

        return RolloutBatch.from_tensors(
            {key: stack(key, 1) for key in self.tensors if not key.startswith("state.")},
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
