"""Success rate per delay T of trained agents (the protocol of `python -m nalu_rl.evaluate`).

All delays are played at once: one native vector env per delay (built with `delay_range=(T, T)`
so that every autoreset keeps T), their observations stacked into one batch for the policy.

Episodes are counted without bias: every env slot plays a quota of episodes fixed before the
run starts, and only the first `quota` episodes of each slot count. A slot that has met its
quota keeps stepping (the vector env steps all its envs together) but is no longer counted.
Counting "the first N episodes to finish" instead would over-represent short episodes.
A vector env whose slots have all met their quota leaves the batch (and the policy's state), so
the long delays of a turn (T = 1000) are not stepped together with the finished short ones.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.agents import distributions
from nalu_rl.environment import RunEnvironment, ended_episodes, observation_dict
from nalu_rl.errors import InputError
from nalu_rl.spaces import action_components
from nalu_rl.stats import wilson_interval

CSV_COLUMNS = ("agent", "delay", "episodes", "successes", "success_rate", "ceiling", "ci_low", "ci_high")
CSV_NAME = "success_by_delay.csv"
PNG_NAME = "success_by_delay.png"
DEFAULT_DELAYS = range(1, 41)
# Observations the policy sees in one batch at most; more delays than fit are played in turns.
DEFAULT_MAX_BATCH = 2048

# A policy maps a batch of observations (dict of arrays [B, ...]) and the flags marking the
# first observation of an episode ([B] bool) to actions ([B] int).
Policy = Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DelayResult:
    """The evaluation of one agent at one delay T: counts of episode outcomes and the ceiling."""

    agent: str
    delay: int
    episodes: int
    successes: int
    ceiling: float
    outcomes: Mapping[str, int] = field(default_factory=dict)

    @property
    def success_rate(self) -> float:
        """Fraction of the episodes whose outcome was "success"."""
        return self.successes / self.episodes if self.episodes else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of the success rate."""
        return wilson_interval(self.successes, self.episodes)

    def as_row(self) -> dict[str, Any]:
        """The CSV row of this result, keyed by CSV_COLUMNS."""
        low, high = self.interval
        return {
            "agent": self.agent,
            "delay": self.delay,
            "episodes": self.episodes,
            "successes": self.successes,
            "success_rate": round(self.success_rate, 6),
            "ceiling": round(self.ceiling, 6),
            "ci_low": round(low, 6),
            "ci_high": round(high, 6),
        }


def slot_quotas(episodes: int, slots: int) -> np.ndarray:
    """How many episodes each of `slots` env slots plays so that they sum to `episodes`."""
    quotas = np.full(slots, episodes // slots, dtype=np.int64)
    quotas[: episodes % slots] += 1
    return quotas


def delay_seeds(seed: int, delay: int) -> tuple[int, int]:
    """The env seed and the action-sampling seed of delay T: functions of (seed, T) only, so the
    episodes of T do not depend on which other delays are evaluated alongside it."""
    env_seed, action_seed = np.random.SeedSequence([seed, delay]).generate_state(2)
    return int(env_seed), int(action_seed)


def play_episodes(
    policy: Policy, vector_envs: Sequence[Any], quotas: Sequence[np.ndarray], seeds: Sequence[int]
) -> list[Counter]:
    """Play every slot of every vector env until it has finished its quota of episodes.

    `quotas[k][i]` is the number of episodes slot i of `vector_envs[k]` plays (fixed here, before
    any runs). Returns one Counter of outcomes per vector env, over the counted episodes only.
    Once every slot of a vector env has met its quota, that env is no longer stepped and its rows
    leave the batch; a policy with a `keep_rows(mask)` method is told which rows stay.
    """
    sizes = [env.num_envs for env in vector_envs]
    observations = [
        observation_dict(env.reset(seed=seed)[0]) for env, seed in zip(vector_envs, seeds, strict=True)
    ]
    quota = np.concatenate([np.asarray(q, dtype=np.int64) for q in quotas])
    if quota.shape[0] != sum(sizes):
        raise ValueError(f"quotas cover {quota.shape[0]} slots, the vector envs have {sum(sizes)}")
    finished = np.zeros_like(quota)
    outcome_counts = [Counter() for _ in vector_envs]
    episode_start = np.ones(sum(sizes), dtype=bool)
    done = np.zeros(sum(sizes), dtype=bool)
    bounds = np.cumsum([0, *sizes])

    def unfinished(k: int) -> bool:
        slots = slice(bounds[k], bounds[k + 1])
        return bool(np.any(finished[slots] < quota[slots]))

    live = [k for k in range(len(vector_envs)) if unfinished(k)]
    while live:
        rows = np.concatenate([np.arange(bounds[k], bounds[k + 1]) for k in live])
        batch = {key: np.concatenate([observations[k][key] for k in live]) for key in observations[0]}
        chosen = np.asarray(policy(batch, episode_start[rows]))
        actions = np.zeros((sum(sizes), *chosen.shape[1:]), dtype=np.int64)
        actions[rows] = chosen
        # NEXT_STEP autoreset: the step after a done one ignores the action and returns the first
        # observation of the next episode, so the done flags of this step mark the next step's output.
        episode_start = done.copy()
        for k in live:
            lo, hi = bounds[k], bounds[k + 1]
            env_actions = action_components(vector_envs[k].single_action_space).to_env(actions[lo:hi])
            observation, _, terminated, truncated, info = vector_envs[k].step(env_actions)
            observations[k] = observation_dict(observation)
            done[lo:hi] = np.asarray(terminated) | np.asarray(truncated)
            ended = lo + np.flatnonzero(done[lo:hi])
            counted = ended[finished[ended] < quota[ended]]
            if counted.size:
                outcomes = episode_outcomes(info, done[lo:hi])
                outcome_counts[k].update(str(outcome) for outcome in outcomes[counted - lo])
            finished[ended] += 1
        still_live = [k for k in live if unfinished(k)]
        if still_live and len(still_live) < len(live) and hasattr(policy, "keep_rows"):
            policy.keep_rows(np.concatenate([np.full(sizes[k], k in still_live) for k in live]))
        live = still_live
    return outcome_counts


def episode_outcomes(info: Mapping[str, Any], ended: np.ndarray) -> np.ndarray:
    """The outcome of each env of a vector step whose episode ended: `info["outcome"]` where the env
    gives one (TimeTrack: success, early, late, timeout), else "success" or "ended"."""
    if "outcome" in info:
        return np.asarray(info["outcome"])
    success, _ = ended_episodes(info, ended)
    return np.where(success, "success", "ended")


class ModelPolicy:
    """Acts with an ActorCritic one step at a time, keeping its recurrent state between calls.

    Actions (indices: [B], or [B, K] for MultiDiscrete) are sampled from the policy (or its argmax
    with `greedy`; `nalu_rl.agents.distributions`). Sampling noise comes from
    one random stream per group of rows (`group_sizes`, `group_seeds`), so a group's actions do
    not depend on the other groups in the batch.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        batch_size: int,
        greedy: bool = False,
        device: str | torch.device = "cpu",
        group_sizes: Sequence[int] | None = None,
        group_seeds: Sequence[int] | None = None,
    ) -> None:
        self.model = model
        self.greedy = greedy
        self.device = torch.device(device)
        self.state = model.initial_state(batch_size)
        self.state = _to_device(self.state, self.device)
        self.group_sizes = list(group_sizes) if group_sizes is not None else [batch_size]
        seeds = list(group_seeds) if group_seeds is not None else [0] * len(self.group_sizes)
        self.generators = [np.random.default_rng(seed) for seed in seeds]

    def keep_rows(self, keep: np.ndarray) -> None:
        """Drop the rows where `keep` ([B] bool) is False from the state and the random streams.

        Rows leave by whole groups (one group is one delay's vector env), so the sampling stream of
        every remaining group goes on exactly as if nothing had left.
        """
        keep = np.asarray(keep, dtype=bool)
        offsets = np.cumsum([0, *self.group_sizes])
        kept_groups = []
        for index, size in enumerate(self.group_sizes):
            part = keep[offsets[index] : offsets[index] + size]
            if part.any() != part.all():
                raise ValueError("rows must leave by whole groups")
            if part.all():
                kept_groups.append(index)
        mask = torch.from_numpy(keep).to(self.device)
        self.state = tuple(part[mask] for part in self.state)
        self.group_sizes = [self.group_sizes[index] for index in kept_groups]
        self.generators = [self.generators[index] for index in kept_groups]

    @torch.no_grad()
    def __call__(self, observations: Mapping[str, np.ndarray], episode_start: np.ndarray) -> np.ndarray:
        """Actions for one step of the batch; the state is reset where an episode starts."""
        inputs = {
            key: torch.from_numpy(np.asarray(value)).to(self.device)[None]
            for key, value in observations.items()
        }
        starts = torch.from_numpy(np.asarray(episode_start, dtype=bool)).to(self.device)[None]
        logits, _, self.state = self.model(inputs, starts, self.state)
        logits = logits[0].float()
        sizes = self.model.num_actions
        if self.greedy:
            return distributions.greedy(logits, sizes).cpu().numpy()
        components = distributions.probabilities(logits, sizes)
        # One uniform per row (and component), from the row's group stream.
        uniform_shape = () if isinstance(sizes, int) else (len(components),)
        uniforms = np.concatenate(
            [
                generator.random((size, *uniform_shape))
                for generator, size in zip(self.generators, self.group_sizes, strict=True)
            ]
        ).reshape(len(logits), -1)
        chosen = []
        for index, component in enumerate(components):
            probabilities = component.cpu().numpy().astype(np.float64)
            # Inverse-CDF sampling: the first action whose cumulative probability exceeds the uniform.
            cumulative = np.cumsum(probabilities, axis=-1)
            actions = (cumulative < uniforms[:, index, None]).sum(-1)
            chosen.append(np.minimum(actions, probabilities.shape[-1] - 1))
        return chosen[0] if isinstance(sizes, int) else np.stack(chosen, -1)


def _to_device(state: Any, device: torch.device) -> Any:
    if isinstance(state, torch.Tensor):
        return state.to(device)
    if isinstance(state, (tuple, list)):
        return type(state)(_to_device(part, device) for part in state)
    if isinstance(state, dict):
        return {key: _to_device(value, device) for key, value in state.items()}
    return state


def timing_environment(config: Mapping[str, Any]) -> RunEnvironment:
    """The env a checkpoint trained on, checked to be a timing task (InputError otherwise): what the
    success-vs-T evaluation, the recordings and the counter view play."""
    environment = RunEnvironment.from_config(config)
    if not environment.is_timing_task:
        environment.close()
        raise InputError(
            f"{environment.env_id} is not a timing task (no delays and ceilings: see nalu_rl.envs.task), and "
            "this command works on timing tasks only"
        )
    return environment


def delay_meaning(config: Mapping[str, Any]) -> str | None:
    """What the delay T is in the task a checkpoint trained on, when its env class says."""
    return RunEnvironment.from_config(config).delay_meaning


def success_by_delay(
    model: torch.nn.Module,
    config: Mapping[str, Any],
    delays: Iterable[int] = DEFAULT_DELAYS,
    episodes: int = 200,
    seed: int = 0,
    greedy: bool = False,
    device: str | torch.device = "cpu",
    label: str | None = None,
    max_batch: int = DEFAULT_MAX_BATCH,
) -> list[DelayResult]:
    """Success rate of `model` at each delay T, over `episodes` episodes per T .

    `config` is the checkpoint's config ("agent" and "env" are read). Results are in the order
    of sorted delays; the episodes of a delay depend only on (seed, T, episodes, max_batch).
    """
    delays = sorted(set(int(delay) for delay in delays))
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if not delays:
        raise ValueError("no delays to evaluate")
    label = label or str(config.get("agent", "agent"))
    slots = min(episodes, max_batch)
    delays_per_turn = max(1, max_batch // slots)
    model = model.to(device).eval()
    results = []
    with timing_environment(config) as environment:  # its probe gives the ceilings
        for start in range(0, len(delays), delays_per_turn):
            turn = delays[start : start + delays_per_turn]
            vector_envs = [environment.make_vector(slots, delay_range=(delay, delay)) for delay in turn]
            try:
                env_seeds, action_seeds = zip(*(delay_seeds(seed, delay) for delay in turn), strict=True)
                policy = ModelPolicy(
                    model,
                    slots * len(turn),
                    greedy=greedy,
                    device=device,
                    group_sizes=[slots] * len(turn),
                    group_seeds=action_seeds,
                )
                counts = play_episodes(
                    policy, vector_envs, [slot_quotas(episodes, slots)] * len(turn), env_seeds
                )
            finally:
                for env in vector_envs:
                    env.close()
            for delay, outcome_count in zip(turn, counts, strict=True):
                results.append(
                    DelayResult(
                        agent=label,
                        delay=delay,
                        episodes=sum(outcome_count.values()),
                        successes=outcome_count.get("success", 0),
                        ceiling=environment.success_ceiling(delay),
                        outcomes=dict(outcome_count),
                    )
                )
    return results


def write_success_csv(results: Iterable[DelayResult], path: str | os.PathLike) -> Path:
    """Write results as the SPEC's CSV (columns CSV_COLUMNS) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for result in results:
            writer.writerow(result.as_row())
    return path


def evaluate_and_write(
    model: torch.nn.Module,
    config: dict,
    out_dir: str | os.PathLike,
    delays: Iterable[int] = DEFAULT_DELAYS,
    episodes: int = 200,
    seed: int = 0,
    greedy: bool = False,
    device: str = "cpu",
) -> Path:
    """Evaluate `model` at each delay and write `success_by_delay.csv` and `.png` in `out_dir`.

    Returns the CSV path. The plot marks the training range of the checkpoint's environment.
    """
    from nalu_rl.figures import plot_success_by_delay

    results = success_by_delay(
        model, config, delays, episodes=episodes, seed=seed, greedy=greedy, device=device
    )
    out_dir = Path(out_dir)
    csv_path = write_success_csv(results, out_dir / CSV_NAME)
    plot_success_by_delay(
        [result.as_row() for result in results],
        out_dir / PNG_NAME,
        train_range=training_range(config),
        delay_meaning=delay_meaning(config),
    )
    return csv_path


def training_range(config: Mapping[str, Any]) -> tuple[int, int]:
    """The delay range a checkpoint trained on, as its environment has it (InputError when the env is
    not a timing task)."""
    with timing_environment(config) as environment:
        return environment.delay_range
