"""The learner runtime: K actor processes (`--actors K`) fill shared rollout buffers for one
learner, or, with `--actors 0`, the same actor and learner code runs one after the other in this
process. What the learner does with a batch is the update (`runtime/update.py`, `Learner`).
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections import deque
from typing import Any

from nalu_rl.runtime.actor import Actor, actor_process, build_policy
from nalu_rl.runtime.rollout import RolloutBatch, RolloutBuffers, WeightStore
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.update import Learner
from nalu_rl.runtime.workers import WorkerPool, retain_freed_memory


class ActorBuffers:
    """Which rollout buffers each actor of a pool holds; a successor of a dead actor gets them back.

    An actor is asked for an unroll by sending it a buffer index, and answers with the same index
    once the unroll is written there.
    """

    def __init__(self, pool: WorkerPool, buffers_per_actor: int) -> None:
        self.pool = pool
        self.held: list[set[int]] = [
            set(range(actor_id * buffers_per_actor, (actor_id + 1) * buffers_per_actor))
            for actor_id in range(len(pool))
        ]

    def hand_out(self, actor_id: int) -> None:
        """Send actor `actor_id` every buffer it holds (after it started or restarted)."""
        for index in sorted(self.held[actor_id]):
            self.pool.send(actor_id, index)

    def release(self, actor_id: int, index: int) -> None:
        """Hand buffer `index` back to actor `actor_id` to fill with its next unroll."""
        self.held[actor_id].add(index)
        # If the actor died, its successor is handed the buffers it held when it starts.
        self.pool.send(actor_id, index)

    def filled(self, timeout: float) -> list[tuple[int, int]]:
        """(actor id, buffer index) of the unrolls written since the last call, waiting up to `timeout`."""
        finished = self.pool.receive(timeout)
        for actor_id, index in finished:
            self.held[actor_id].discard(index)
        return finished


def start_actor_pool(
    run: TrainingRun, buffers: RolloutBuffers, weights: WeightStore, context: Any, buffers_per_actor: int
) -> tuple[WorkerPool, ActorBuffers, Any]:
    """Start `run.config.actors` actor processes, each holding `buffers_per_actor` buffers; also
    return the shared per-actor busy seconds."""
    busy_seconds = context.Array("d", run.config.actors, lock=False)
    config_dict = run.config.to_dict()

    def actor_args(actor_id: int, link: Any) -> tuple[Any, ...]:
        return (
            actor_id,
            config_dict,
            run.model.wiring,
            run.next_seed(),
            buffers,
            weights,
            link,
            busy_seconds,
            pool.stop,
        )

    pool = WorkerPool(context, run.config.actors, actor_process, actor_args, name="nalu_rl-actor")
    actor_buffers = ActorBuffers(pool, buffers_per_actor)
    pool.on_start = actor_buffers.hand_out  # each (re)started actor gets the buffers it holds
    pool.start_all()
    return pool, actor_buffers, busy_seconds


def busy_fraction(busy_seconds: Any, elapsed_seconds: float) -> float:
    """Mean fraction of `elapsed_seconds` the actors spent acting (the counters are reset)."""
    count = len(busy_seconds)
    if elapsed_seconds <= 0 or not count:
        return 0.0
    total = sum(busy_seconds[i] for i in range(count))
    for i in range(count):
        busy_seconds[i] = 0.0
    return total / (elapsed_seconds * count)


def train_learner(run: TrainingRun) -> None:
    """Train `run.model` with the learner runtime until `run.should_stop()`."""
    config = run.config
    serial = config.actors == 0
    # Synchronous actors hold one buffer each and get it back only once the batch it joined has
    # been learned from, so every unroll is played with the newest weights (policy lag 0).
    synchronous = not serial and config.synchronous
    buffers_per_actor = 1 if synchronous else config.buffers_per_actor
    # validate() has refused a batch larger than the buffers when actors run ahead.
    batch_unrolls = config.actors if synchronous else config.batch_unrolls
    if not serial and not synchronous and run.model.wiring.policy_reads_memory:
        print(
            f"warning: {config.agent}'s policy reads an LSTM, which did not learn with actors running "
            "ahead (--no-synchronous); see docs/RESULTS.md, 'Policy lag and LSTM policies'",
            file=sys.stderr,
        )
    retain_freed_memory()
    acting_model = build_policy(config, run.model.wiring).eval()
    num_buffers = config.batch_unrolls if serial else config.actors * buffers_per_actor
    buffers = RolloutBuffers(
        acting_model.observation_space,
        acting_model.initial_state(config.envs_per_actor),
        config.unroll_length,
        config.envs_per_actor,
        num_buffers,
        shared=not serial,
        action_shape=acting_model.action_shape,
    )
    context = multiprocessing.get_context("spawn")
    weights = WeightStore(run.model, context)
    learner = Learner(run.model, run.optimizer, config, run.reward_normalizer)
    pin_memory = run.device.type == "cuda"
    if serial:
        version = weights.pull(acting_model, -1)
        actor = Actor(config, acting_model, config.envs_per_actor, run.next_seed())
        while not run.should_stop():
            started = time.perf_counter()
            for index in range(num_buffers):
                buffers.policy_versions[index] = version
                actor.unroll(buffers.slot(index))
            run.add_busy_time("actor", time.perf_counter() - started)
            learn(run, learner, buffers.batch(list(range(num_buffers)), pin_memory), weights)
            version = weights.pull(acting_model, version)
        return

    pool, actor_buffers, busy_seconds = start_actor_pool(run, buffers, weights, context, buffers_per_actor)
    # Actors hold nothing that must be saved, so a short wait keeps the whole shutdown (actors,
    # checkpoint, logs) within the 5 s a user may wait after Ctrl-C, even on busy cores.
    stop_actors = lambda: pool.close(timeout=1.0)  # noqa: E731
    run.on_close.append(stop_actors)
    ready: deque[tuple[int, int]] = deque()
    last_busy_read = time.perf_counter()
    try:
        while not run.should_stop():
            ready.extend(actor_buffers.filled(timeout=0.1))
            run.workers_replaced(pool.replace_dead())
            if len(ready) < batch_unrolls:
                continue
            taken = [ready.popleft() for _ in range(batch_unrolls)]
            batch = buffers.batch([index for _, index in taken], pin_memory)
            if not synchronous:
                # Hand the buffers back before learning, so that actors act while the learner learns.
                for actor_id, index in taken:
                    actor_buffers.release(actor_id, index)
            learn(run, learner, batch, weights)
            if synchronous:
                for actor_id, index in taken:
                    actor_buffers.release(actor_id, index)
            now = time.perf_counter()
            if now - last_busy_read >= config.log_interval_s:
                run.set_scalar("runtime/actor_busy", busy_fraction(busy_seconds, now - last_busy_read))
                last_busy_read = now
    finally:
        stop_actors()
        run.on_close.remove(stop_actors)


def learn(run: TrainingRun, learner: Learner, batch: RolloutBatch, weights: WeightStore) -> None:
    """One learner step on a batch: account its steps and episodes, update, publish the weights."""
    started = time.perf_counter()
    run.record_batch(batch)
    lags = weights.version - batch.policy_versions
    metrics = learner.update(batch.to(run.device), *run.update_schedule())
    run.record_update(metrics)
    if metrics is not None:
        weights.publish(run.model)
    run.record_policy_lag(lags)
    run.add_busy_time("learner", time.perf_counter() - started)
