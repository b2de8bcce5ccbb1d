"""The hogwild runtime: the classic A3C of Mnih et al.

K worker processes each play their own env(s) with a local copy of the model, compute the
gradient of the same loss as the learner runtime on their own unroll, and apply it to one model
in shared memory. The Adam step, moments included, is serialised by a lock: two workers never
update the optimizer state at once, so no update is lost (the gradients themselves may be
computed from slightly stale weights, as in A3C).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from nalu_rl.actor import Actor, make_vector_env, prepare_worker_process
from nalu_rl.learner import compute_loss
from nalu_rl.rollout import RolloutBuffers
from nalu_rl.units import clamp_unit_weights_

if TYPE_CHECKING:
    from nalu_rl.train import TrainingRun


def share_optimizer_state(optimizer: torch.optim.Adam) -> list[dict[str, torch.Tensor]]:
    """Create Adam's per-parameter state now (if absent) in shared memory; return it in parameter order."""
    states = []
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            state = optimizer.state[parameter]
            if not state:
                state["step"] = torch.zeros((), dtype=torch.float32)
                state["exp_avg"] = torch.zeros_like(parameter, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(parameter, memory_format=torch.preserve_format)
            for key, value in state.items():
                state[key] = value.share_memory_()
            states.append(state)
    return states


def worker_process(
    worker_id: int,
    config_dict: dict[str, Any],
    seed: int,
    shared_model: torch.nn.Module,
    optimizer_states: list[dict[str, torch.Tensor]],
    optimizer_lock: Any,
    link: Connection,
    stop: Any,
) -> None:
    """Entry point of a hogwild worker: act, compute gradients locally, step the shared model."""
    from agents import ActorCritic
    from nalu_rl.config import Config

    prepare_worker_process()
    config = Config.from_dict(config_dict)
    num_envs = config.hogwild_envs
    probe = make_vector_env(config, 1)
    num_actions = int(probe.single_action_space.n)
    local_model = ActorCritic(probe.single_observation_space, num_actions, shared_model.wiring)
    buffers = RolloutBuffers(
        probe.single_observation_space,
        local_model.initial_state(num_envs),
        config.unroll_length,
        num_envs,
        num_buffers=1,
        shared=False,
    )
    probe.close()
    optimizer = torch.optim.Adam(shared_model.parameters(), lr=config.learning_rate)
    for parameter, state in zip(shared_model.parameters(), optimizer_states, strict=True):
        optimizer.state[parameter] = state
    local_model.load_state_dict(shared_model.state_dict())
    actor = Actor(config, local_model, num_envs, seed)
    slot = buffers.slot(0)
    shared_parameters = list(shared_model.parameters())
    local_parameters = list(local_model.parameters())
    try:
        while not stop.is_set():
            started = time.perf_counter()
            local_model.load_state_dict(shared_model.state_dict())
            actor.unroll(slot)
            batch = buffers.batch([0])
            # Updates so far (Adam's shared step count) stand in for the global step count.
            steps = int(optimizer_states[0].get("step", 0)) * config.unroll_length * num_envs
            total, metrics = compute_loss(local_model, batch, config, steps)
            applied = False
            if np.isfinite(metrics["loss/total"]):
                local_model.zero_grad(set_to_none=True)
                total.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(local_parameters, config.max_grad_norm)
                if torch.isfinite(grad_norm):
                    with optimizer_lock:
                        for shared, local in zip(shared_parameters, local_parameters, strict=True):
                            shared.grad = local.grad
                        optimizer.step()
                        clamp_unit_weights_(shared_model)
                        for shared in shared_parameters:
                            shared.grad = None
                    applied = True
            ended = batch.outcome >= 0
            link.send(
                {
                    "steps": batch.num_steps,
                    "applied": applied,
                    "metrics": metrics,
                    "delays": batch.delay[ended].numpy(),
                    "successes": batch.outcome[ended].numpy() == 0,
                    "returns": batch.episode_return[ended].numpy(),
                    "busy_seconds": time.perf_counter() - started,
                }
            )
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass


def train_hogwild(run: TrainingRun) -> None:
    """Train `run.model` (moved to shared CPU memory) with hogwild workers until `run.should_stop()`."""
    config = run.config
    if run.device.type != "cpu":
        run.model.to("cpu")
        run.device = torch.device("cpu")
    run.model.share_memory()
    optimizer_states = share_optimizer_state(run.optimizer)
    context = multiprocessing.get_context("spawn")
    lock = context.Lock()
    stop = context.Event()
    processes: list[Any] = [None] * config.actors
    links: list[Connection | None] = [None] * config.actors

    def start(worker_id: int) -> None:
        parent_end, child_end = context.Pipe(duplex=True)
        process = context.Process(
            target=worker_process,
            args=(
                worker_id,
                config.to_dict(),
                run.next_seed(),
                run.model,
                optimizer_states,
                lock,
                child_end,
                stop,
            ),
            name=f"nalu_rl-hogwild-{worker_id}",
            daemon=True,
        )
        process.start()
        child_end.close()
        processes[worker_id], links[worker_id] = process, parent_end

    def receive(worker_id: int) -> None:
        link = links[worker_id]
        try:
            while link.poll():
                _account(run, link.recv())
        except (EOFError, OSError):
            links[worker_id] = None

    def close() -> None:
        stop.set()
        deadline = time.monotonic() + 2.0
        for worker_id, process in enumerate(processes):
            if process is not None:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
            # Count the updates that workers applied after the stop was asked for.
            if links[worker_id] is not None:
                receive(worker_id)
        for process in processes:
            if process is not None and process.is_alive():
                process.terminate()
                process.join(timeout=1.0)
                if process.is_alive():
                    process.kill()
                    process.join()

    for worker_id in range(config.actors):
        start(worker_id)
    run.on_close.append(close)
    # Checkpoints read the shared model and optimizer state under the lock, never mid-step.
    run.checkpoint_lock = lock
    try:
        while not run.should_stop():
            for link in wait([link for link in links if link is not None], timeout=0.1):
                receive(links.index(link))
            for worker_id, process in enumerate(processes):
                if not process.is_alive():
                    process.join(timeout=0)
                    start(worker_id)
                    run.workers_replaced(1)
    finally:
        close()
        run.on_close.remove(close)


def _account(run: TrainingRun, report: dict[str, Any]) -> None:
    run.steps += report["steps"]
    run.timing["actor_seconds"] += report["busy_seconds"]
    if report["applied"]:
        run.good_update(report["metrics"])
    else:
        run.bad_update()
    if len(report["delays"]):
        run.record_episodes(report["delays"], report["successes"], report["returns"])
