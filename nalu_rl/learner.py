"""The learner runtime: actor processes fill shared rollout buffers, one learner updates the model.

`compute_loss` (A3C loss with V-trace correction) and `Learner.update` are shared with the
hogwild runtime; `train_learner` runs either K actor processes (`--actors K`) or, with
`--actors 0`, the same actor and learner code one after the other in this process.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import sys
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

import torch

from nalu_rl.actor import Actor, actor_process, make_vector_env
from nalu_rl.rollout import RolloutBatch, RolloutBuffers, WeightStore
from nalu_rl.units import clamp_unit_weights_

if TYPE_CHECKING:
    from nalu_rl.train import TrainingRun

# glibc's mallopt parameters (malloc.h).
_M_MXFAST = 1
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def retain_freed_memory() -> bool:
    """Make this process's C allocator reuse freed memory instead of handing it back to the operating
    system; True when it applied (glibc), False elsewhere (nothing changes)."""
    # Every learner update allocates and frees the same large tensors (a pixel batch in float32 is
    # ~100 MB, a sequence of LSTM gates 5 MB). By default glibc maps large blocks with mmap and
    # unmaps them on free, and torch's 64-byte-aligned blocks leave a small leading fragment in a
    # fast bin that keeps a freed block from merging back, so the next block lands on fresh pages:
    # every update page-faulted its memory in again (on the shared VMs measured, an 8 MB fill took
    # 5-13 ms on fresh pages, 0.5-1.5 ms on reused ones). Without mmap, fast bins or trimming, the
    # heap settles at the update's peak and is reused.
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    settings = ((_M_MMAP_MAX, 0), (_M_MXFAST, 0), (_M_TRIM_THRESHOLD, 2**31 - 1))
    return all([bool(mallopt(parameter, value)) for parameter, value in settings])


def compute_loss(
    model: torch.nn.Module, batch: RolloutBatch, config: Any, steps: int = 0
) -> tuple[Any, dict[str, float]]:
    """A3C loss of one batch with the V-trace off-policy correction; returns the LossTerms and extras.

    The discount is cut where an episode terminated, and steps whose action the env ignored
    (NEXT_STEP autoreset) are masked out of the loss. The arithmetic units' regulariser enters
    with the weight `regularizer_scale` gives it after `steps` environment steps.
    """
    from agents.losses import actor_critic_loss, vtrace
    from nalu_rl.nau import regularizer_scale

    length = batch.actions.shape[0]
    logits, values, _ = model(batch.obs, batch.episode_start, batch.initial_state)
    log_probs = torch.log_softmax(logits[:length].float(), dim=-1)
    target_log_probs = log_probs.gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1)
    discounts = config.gamma * (~batch.terminated).float()
    with torch.no_grad():
        value_targets, advantages = vtrace(
            batch.behaviour_log_probs,
            target_log_probs.detach(),
            batch.rewards,
            discounts,
            values[:length].detach(),
            values[length].detach(),
            rho_clip=config.rho_clip,
            c_clip=config.c_clip,
        )
    mask = (~batch.ignored).float()
    # How far the learner's policy has moved from the one that acted (0 when they agree).
    log_ratio = (target_log_probs.detach() - batch.behaviour_log_probs).abs()
    mean_abs_log_ratio = float((log_ratio * mask).sum() / mask.sum().clamp(min=1.0))
    terms = actor_critic_loss(
        logits[:length],
        batch.actions,
        values[:length],
        value_targets,
        advantages,
        mask,
        value_coef=config.value_coef,
        entropy_coef=config.entropy_coef,
    )
    regularizer = model.regularizer()
    regularizer_weight = regularizer_scale(
        steps, config.regularizer_start_steps, config.regularizer_end_steps, config.regularizer_weight
    )
    total = terms.total + regularizer_weight * regularizer
    extras = {
        "loss/total": float(total.detach()),
        "loss/policy": float(terms.policy.detach()),
        "loss/value": float(terms.value.detach()),
        "loss/entropy": float(terms.entropy.detach()),
        "loss/regularizer": float(torch.as_tensor(regularizer).detach()),
        "loss/regularizer_weight": regularizer_weight,
        "loss/policy_log_ratio": mean_abs_log_ratio,
    }
    return total, extras


class Learner:
    """Applies the loss of a batch to the model with Adam; skips (and counts) non-finite updates."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: Any) -> None:
        self.model = model
        self.optimizer = optimizer
        self.config = config

    def update(self, batch: RolloutBatch, steps: int = 0) -> dict[str, float] | None:
        """One gradient step on `batch` after `steps` environment steps; None when the loss or
        gradient was NaN/inf (no step taken)."""
        self.model.train()
        total, extras = compute_loss(self.model, batch, self.config, steps)
        if not math.isfinite(extras["loss/total"]):
            return None
        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        if not torch.isfinite(grad_norm):
            self.optimizer.zero_grad(set_to_none=True)
            return None
        self.optimizer.step()
        clamp_unit_weights_(self.model)
        extras["loss/grad_norm"] = float(grad_norm)
        return extras


class ActorPool:
    """K actor processes, each linked to the learner by its own pipe that carries buffer indices.

    Each actor owns `buffers_per_actor` buffers; the learner sends an index to ask for an unroll
    and gets it back when the unroll is written. A private pipe per actor means that an actor
    killed at any moment takes nothing shared down with it: it is restarted on a fresh pipe and
    handed the buffers it held.
    """

    def __init__(
        self,
        run: TrainingRun,
        buffers: RolloutBuffers,
        weights: WeightStore,
        context: Any,
        buffers_per_actor: int,
    ) -> None:
        self.run = run
        self.buffers = buffers
        self.weights = weights
        self.context = context
        count = run.config.actors
        self.busy_seconds = context.Array("d", count, lock=False)
        self.stop = context.Event()
        self.processes: list[Any] = [None] * count
        self.links: list[Connection | None] = [None] * count
        self.held: list[set[int]] = [set() for _ in range(count)]
        self.restarts = 0
        for actor_id in range(count):
            first = actor_id * buffers_per_actor
            self._start(actor_id, set(range(first, first + buffers_per_actor)))

    def _start(self, actor_id: int, indices: set[int]) -> None:
        learner_end, actor_end = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=actor_process,
            args=(
                actor_id,
                self.run.config.to_dict(),
                self.run.model.wiring,
                self.run.next_seed(),
                self.buffers,
                self.weights,
                actor_end,
                self.busy_seconds,
                self.stop,
            ),
            name=f"nalu_rl-actor-{actor_id}",
            daemon=True,
        )
        process.start()
        actor_end.close()
        self.processes[actor_id] = process
        self.links[actor_id] = learner_end
        self.held[actor_id] = set()
        for index in sorted(indices):
            self.release(actor_id, index)

    def release(self, actor_id: int, index: int) -> None:
        """Hand buffer `index` back to actor `actor_id` to fill with its next unroll."""
        self.held[actor_id].add(index)
        # If the actor died, `replace_dead` gives the buffers it held to its successor.
        with contextlib.suppress(BrokenPipeError, OSError):
            self.links[actor_id].send(index)

    def collect(self, timeout: float) -> list[tuple[int, int]]:
        """(actor id, buffer index) of the unrolls written since the last call, waiting up to `timeout`."""
        ready = wait([link for link in self.links if link is not None], timeout)
        finished = []
        for actor_id, link in enumerate(self.links):
            if link not in ready:
                continue
            try:
                while link.poll():
                    index = link.recv()
                    self.held[actor_id].discard(index)
                    finished.append((actor_id, index))
            except (EOFError, OSError):
                self.links[actor_id] = None
        return finished

    def replace_dead(self) -> int:
        """Restart every actor that has died; return how many were restarted."""
        restarted = 0
        for actor_id, process in enumerate(self.processes):
            if process.is_alive():
                continue
            process.join(timeout=0)
            if self.links[actor_id] is not None:
                self.links[actor_id].close()
            self._start(actor_id, self.held[actor_id])
            restarted += 1
        self.restarts += restarted
        return restarted

    def busy_fraction(self, elapsed_seconds: float) -> float:
        """Mean fraction of `elapsed_seconds` the actors spent acting (reset after reading)."""
        if elapsed_seconds <= 0 or not self.processes:
            return 0.0
        total = sum(self.busy_seconds[i] for i in range(len(self.processes)))
        for i in range(len(self.processes)):
            self.busy_seconds[i] = 0.0
        return total / (elapsed_seconds * len(self.processes))

    def close(self, timeout: float = 1.0) -> None:
        """Stop every actor: ask, wait up to `timeout`, then terminate and kill what is left.

        Actors hold nothing that must be saved, so a short wait keeps the whole shutdown (actors,
        checkpoint, logs) within the 5 s a user may wait after Ctrl-C, even on busy cores."""
        self.stop.set()
        for link in self.links:
            if link is not None:
                with contextlib.suppress(BrokenPipeError, OSError):
                    link.send(None)
        deadline = time.monotonic() + timeout
        for process in self.processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(timeout=0.5)
            if process.is_alive():
                process.kill()
                process.join()
        for link in self.links:
            if link is not None:
                link.close()


def train_learner(run: TrainingRun) -> None:
    """Train `run.model` with the learner runtime until `run.should_stop()`."""
    from agents import ActorCritic

    config = run.config
    serial = config.actors == 0
    # Synchronous actors hold one buffer each and get it back only once the batch it joined has
    # been learned from, so every unroll is played with the newest weights (policy lag 0).
    synchronous = not serial and config.synchronous
    buffers_per_actor = 1 if synchronous else config.buffers_per_actor
    # validate() has refused a batch larger than the buffers when actors run ahead.
    batch_unrolls = config.actors if synchronous else config.batch_unrolls
    if not serial and not synchronous and run.model.wiring.policy_reads_lstm:
        print(
            f"warning: {config.agent}'s policy reads an LSTM, which did not learn with actors running "
            "ahead (--no-synchronous); see docs/RESULTS.md, 'Policy lag and LSTM policies'",
            file=sys.stderr,
        )
    retain_freed_memory()
    probe = make_vector_env(config, 1)
    observation_space = probe.single_observation_space
    num_actions = int(probe.single_action_space.n)
    probe.close()
    acting_model = ActorCritic(observation_space, num_actions, run.model.wiring).eval()
    num_buffers = config.batch_unrolls if serial else config.actors * buffers_per_actor
    buffers = RolloutBuffers(
        observation_space,
        acting_model.initial_state(config.envs_per_actor),
        config.unroll_length,
        config.envs_per_actor,
        num_buffers,
        shared=not serial,
    )
    context = multiprocessing.get_context("spawn")
    weights = WeightStore(run.model, context)
    learner = Learner(run.model, run.optimizer, config)
    pin_memory = run.device.type == "cuda"
    if serial:
        version = weights.pull(acting_model, -1)
        actor = Actor(config, acting_model, config.envs_per_actor, run.next_seed())
        while not run.should_stop():
            started = time.perf_counter()
            for index in range(num_buffers):
                buffers.policy_versions[index] = version
                actor.unroll(buffers.slot(index))
            run.timing["actor_seconds"] += time.perf_counter() - started
            _learn(run, learner, buffers.batch(list(range(num_buffers)), pin_memory), weights)
            version = weights.pull(acting_model, version)
        return

    pool = ActorPool(run, buffers, weights, context, buffers_per_actor)
    run.on_close.append(pool.close)
    ready: deque[tuple[int, int]] = deque()
    last_busy_read = time.perf_counter()
    try:
        while not run.should_stop():
            ready.extend(pool.collect(timeout=0.1))
            run.workers_replaced(pool.replace_dead())
            if len(ready) < batch_unrolls:
                continue
            taken = [ready.popleft() for _ in range(batch_unrolls)]
            batch = buffers.batch([index for _, index in taken], pin_memory)
            if not synchronous:
                # Hand the buffers back before learning, so that actors act while the learner learns.
                for actor_id, index in taken:
                    pool.release(actor_id, index)
            _learn(run, learner, batch, weights)
            if synchronous:
                for actor_id, index in taken:
                    pool.release(actor_id, index)
            now = time.perf_counter()
            if now - last_busy_read >= config.log_interval_s:
                run.scalars["runtime/actor_busy"] = pool.busy_fraction(now - last_busy_read)
                last_busy_read = now
    finally:
        pool.close()
        run.on_close.remove(pool.close)


def _learn(run: TrainingRun, learner: Learner, batch: RolloutBatch, weights: WeightStore) -> None:
    """One learner step on a batch: update, publish weights, account steps and episodes."""
    started = time.perf_counter()
    run.record_batch(batch)
    lag = (weights.version - batch.policy_versions).float()
    metrics = learner.update(batch.to(run.device), run.regularizer_steps())
    if metrics is None:
        run.bad_update()
    else:
        run.good_update(metrics)
        weights.publish(run.model)
    run.counters["max_policy_lag"] = max(run.counters["max_policy_lag"], int(lag.max()))
    run.scalars["runtime/policy_lag"] = float(lag.mean())
    run.scalars["runtime/policy_lag_max"] = float(lag.max())
    run.timing["learner_seconds"] += time.perf_counter() - started
