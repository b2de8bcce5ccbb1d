"""The environment of a run: any Gymnasium env with Discrete or MultiDiscrete actions, named by its
registered id.

The run builds its envs with `gymnasium.make` / `gymnasium.make_vec` from an id and keyword
arguments (`nalu_rl/TimeTrack-v0` by default; a user's env is registered with `gymnasium.register`,
in a module given to `--import`). Observations may be any nesting of Dict and Tuple over Box,
Discrete, MultiDiscrete and MultiBinary spaces; the agents read the flat Dict of its leaves
(`nalu_rl.spaces`: a bare Box is the one entry OBSERVATION_KEY). An episode's success is read
from `info["success"]` where the env gives it (else `info["outcome"] == "success"`), its delay from
`info["delay"]`.

A timing task (`nalu_rl.envs.task`: TimeTrack, IntervalTiming, or any env that follows that
interface) also has a training range of delays and a success ceiling at each delay: these enable
the stop rule's success target and the success-vs-T evaluation. Its `metadata["task_options"]`
says which of the run's task options (--obs, --size, --delay-range, --stimulus, --reward-mode)
it takes as keyword arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np

from nalu_rl.errors import InputError
from nalu_rl.spaces import action_components, leaf_space
from nalu_rl.spaces import observation_dict as observation_dict  # the runtime and evaluation read it here

DEFAULT_ENV_ID = "nalu_rl/TimeTrack-v0"
# The run's task options (Config fields) and the keyword argument each is for a timing task.
TASK_OPTION_KWARGS = {
    "obs": "obs_mode",
    "size": "size",
    "delay_range": "delay_range",
    "stimulus": "stimulus",
    "reward_mode": "reward_mode",
}


def _register_project_envs() -> None:
    import nalu_rl.envs  # noqa: F401  (registers nalu_rl/TimeTrack-v0 and nalu_rl/IntervalTiming-v0)


def env_spec(env_id: str) -> gymnasium.envs.registration.EnvSpec:
    """The Gymnasium registration of `env_id` (InputError naming a few registered ids if none)."""
    _register_project_envs()
    try:
        return gymnasium.spec(env_id)
    except gymnasium.error.Error as error:
        ours = sorted(name for name in gymnasium.registry if name.startswith("nalu_rl/"))
        raise InputError(
            f"unknown --env-id {env_id!r} ({error}); registered here: {', '.join(ours)}, Gymnasium's own "
            "(e.g. CartPole-v1), and any registered by an --import module"
        ) from None


def env_metadata(env_id: str) -> Mapping[str, Any]:
    """The `metadata` of the env class registered as `env_id`, read without building an env (empty
    where its entry point has none)."""
    entry_point = env_spec(env_id).entry_point
    try:
        creator = (
            gymnasium.envs.registration.load_env_creator(entry_point)
            if isinstance(entry_point, str)
            else entry_point
        )
    except (ImportError, AttributeError) as error:
        raise InputError(
            f"--env-id {env_id!r}: cannot load its entry point {entry_point!r}: {error}"
        ) from None
    metadata = getattr(creator, "metadata", None)
    return metadata if isinstance(metadata, Mapping) else {}


def task_options(env_id: str) -> tuple[str, ...]:
    """The keyword arguments among the run's task options that the env `env_id` takes (its class's
    `metadata["task_options"]`; none for an env that is not a timing task)."""
    return tuple(env_metadata(env_id).get("task_options", ()))


def parse_env_kwargs(text: str) -> dict[str, Any]:
    """--env-kwargs: a JSON object of keyword arguments (ValueError for anything else)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"--env-kwargs must be a JSON object, e.g. '{{\"size\": 7}}': {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"--env-kwargs must be a JSON object, got {text!r}")
    return value


def ended_episodes(info: Mapping[str, Any], ended: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the envs of a vector step where `ended` is True: (success bool, delay int) per env.

    Success is `info["success"]`, else `info["outcome"] == "success"`, else False; the delay is
    `info["delay"]`, else 0.
    """
    ended = np.asarray(ended, dtype=bool)
    if "success" in info:
        success = np.asarray(info["success"], dtype=bool) & np.asarray(
            info.get("_success", ended), dtype=bool
        )
    elif "outcome" in info:
        success = np.asarray(info["outcome"]) == "success"
    else:
        success = np.zeros_like(ended)
    delay = np.asarray(info["delay"], dtype=np.int64) if "delay" in info else np.zeros(len(ended), np.int64)
    return success & ended, delay


@dataclass
class RunEnvironment:
    """The env of a run: its id and keyword arguments, how to build it, and what it offers.

    What it offers is read from one env it builds when first asked (`probe`); `with RunEnvironment(...)
    as environment:` closes that env on leaving, as `close()` does.
    """

    env_id: str = DEFAULT_ENV_ID
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    _probe: gymnasium.Env | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RunEnvironment:
        """The env of a run's stored config (its "env_id", default TimeTrack, and "env" kwargs, less
        those that whoever builds the env sets itself: render_mode, num_envs)."""
        set_by_builder = ("render_mode", "num_envs")
        kwargs = {key: value for key, value in (config.get("env") or {}).items() if key not in set_by_builder}
        return cls(str(config.get("env_id") or DEFAULT_ENV_ID), kwargs)

    def make(self, **overrides: Any) -> gymnasium.Env:
        """One env (`gymnasium.make`), with `overrides` over the run's keyword arguments."""
        return self._build(gymnasium.make, overrides)

    def make_vector(self, num_envs: int, **overrides: Any) -> gymnasium.vector.VectorEnv:
        """`num_envs` envs stepped together (`gymnasium.make_vec`: the env's native vector env where it
        registers one, else a SyncVectorEnv), autoreset on the step after an episode ends."""
        return self._build(gymnasium.make_vec, {"num_envs": num_envs, **overrides})

    def _build(self, builder: Any, overrides: Mapping[str, Any]) -> Any:
        """`builder(env_id, **kwargs)` with `overrides` over the run's keyword arguments; InputError in
        one line for an unknown id or keyword arguments the env refuses."""
        env_spec(self.env_id)
        try:
            return builder(self.env_id, **{**self.kwargs, **overrides})
        except (TypeError, ValueError, gymnasium.error.Error) as error:
            raise InputError(f"cannot build {self.env_id} with {dict(self.kwargs)}: {error}") from None

    @property
    def probe(self) -> gymnasium.Env:
        """One env of the run, kept to read its spaces and, for a timing task, its ceilings."""
        if self._probe is None:
            self._probe = self.make()
        return self._probe

    def spaces(self) -> tuple[gymnasium.spaces.Dict, int | tuple[int, ...]]:
        """The observation space of one env as the flat Dict of its leaves (`nalu_rl.spaces`) and its
        actions' sizes (an int for Discrete, one per component for MultiDiscrete); InputError in one
        line, naming the env, for actions or an observation entry nalu_rl cannot read."""
        env = self.probe
        try:
            actions = action_components(env.action_space)
            observation_space = leaf_space(env.observation_space)
        except InputError as error:
            raise InputError(f"{self.env_id}: {error}") from None
        return observation_space, actions.action_sizes

    @property
    def is_timing_task(self) -> bool:
        """Whether the env has delays and ceilings (the interface of `nalu_rl.envs.task`)."""
        from nalu_rl.envs import is_timing_task

        return is_timing_task(self.probe)

    def due_time(self, delay: int) -> int:
        """The step at which arrival is due at delay T (a timing task only)."""
        return int(self.probe.unwrapped.due_time(delay))

    def success_ceiling(self, delay: int) -> float:
        """The best possible success rate at delay T (a timing task only)."""
        return float(self.probe.unwrapped.success_ceiling(delay))

    @property
    def delay_range(self) -> tuple[int, int]:
        """The training range of delays (a timing task only)."""
        low, high = self.probe.unwrapped.delay_range
        return int(low), int(high)

    @property
    def delay_meaning(self) -> str | None:
        """What the delay T is in this task, for a figure's axis, when its env class says (no env built)."""
        meaning = env_metadata(self.env_id).get("delay_meaning")
        return str(meaning) if meaning else None

    @property
    def max_delay(self) -> int:
        """The largest delay a reset may ask for (a timing task only)."""
        return int(self.probe.unwrapped.max_delay)

    def close(self) -> None:
        """Close the probe env, if one was built."""
        if self._probe is not None:
            self._probe.close()
            self._probe = None

    def __enter__(self) -> RunEnvironment:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
