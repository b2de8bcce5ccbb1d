"""The hogwild runtime: the classic A3C of Mnih et al.

K worker processes each play their own env(s) with a local copy of the model, compute the
gradient of the same loss as the learner runtime (`runtime/update.py`) on their own unroll, and
apply it to one model in shared memory. The Adam step, moments included, is serialised by a lock:
two workers never update the optimizer state at once, so no update is lost (the gradients
themselves may be computed from slightly stale weights, as in A3C).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection
from typing import Any

import torch

from nalu_rl.runtime.actor import Actor, build_policy
from nalu_rl.runtime.rollout import RolloutBuffers
from nalu_rl.runtime.run import TrainingRun, build_optimizer
from nalu_rl.runtime.update import compute_loss, guarded_update
from nalu_rl.runtime.workers import WorkerPool, prepare_worker_process
from nalu_rl.units import clamp_unit_weights_


def share_optimizer_state(optimizer: torch.optim.Adam) -> list[dict[str, torch.Tensor]]:
    """Create Adam's per-parameter state now (if absent) in shared memory; return it in the order of
    the optimizer's groups."""
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
    from nalu_rl.config import Config
    from nalu_rl.plugins import import_modules

    prepare_worker_process()
    config = Config.from_dict(config_dict)
    import_modules(config.imports)
    num_envs = config.hogwild_envs
    local_model = build_policy(config, shared_model.wiring)
    buffers = RolloutBuffers(
        local_model.observation_space,
        local_model.initial_state(num_envs),
        config.unroll_length,
        num_envs,
        num_buffers=1,
        shared=False,
        action_shape=local_model.action_shape,
    )
    optimizer = build_optimizer(shared_model, config)
    parameters = [parameter for group in optimizer.param_groups for parameter in group["params"]]
    for parameter, state in zip(parameters, optimizer_states, strict=True):
        optimizer.state[parameter] = state
    local_model.load_state_dict(shared_model.state_dict())
    actor = Actor(config, local_model, num_envs, seed)
    slot = buffers.slot(0)
    shared_parameters = list(shared_model.parameters())
    local_parameters = list(local_model.parameters())

    def step_shared_model() -> None:
        with optimizer_lock:
            for shared, local in zip(shared_parameters, local_parameters, strict=True):
                shared.grad = local.grad
            optimizer.step()
            clamp_unit_weights_(shared_model)
            for shared in shared_parameters:
                shared.grad = None

    try:
        while not stop.is_set():
            started = time.perf_counter()
            local_model.load_state_dict(shared_model.state_dict())
            actor.unroll(slot)
            batch = buffers.batch([0])
            # Updates so far (Adam's shared step count) stand in for the global step count.
            steps = int(optimizer_states[0].get("step", 0)) * config.unroll_length * num_envs
            total, metrics = compute_loss(
                local_model, batch, config, steps, entropy_coef=config.entropy_coef_at(steps)
            )
            applied = guarded_update(
                local_model, total, metrics, config.max_grad_norm, step_shared_model, config.grad_clip_by_part
            )
            delays, successes, returns = batch.ended_episodes()
            link.send(
                {
                    "steps": batch.num_steps,
                    "metrics": applied,
                    "delays": delays,
                    "successes": successes,
                    "returns": returns,
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
    config_dict = config.to_dict()

    def worker_args(worker_id: int, link: Connection) -> tuple[Any, ...]:
        return (worker_id, config_dict, run.next_seed(), run.model, optimizer_states, lock, link, pool.stop)

    def account(report: dict[str, Any]) -> None:
        run.record_steps(report["steps"], report["delays"], report["successes"], report["returns"])
        run.add_busy_time("actor", report["busy_seconds"])
        run.record_update(report["metrics"])

    pool = WorkerPool(context, config.actors, worker_process, worker_args, name="nalu_rl-hogwild")
    # Updates that workers applied after the stop was asked for are still counted.
    stop_workers = lambda: pool.close(timeout=2.0, last_messages=account)  # noqa: E731
    pool.start_all()
    run.on_close.append(stop_workers)
    # Checkpoints read the shared model and optimizer state under the lock, never mid-step.
    run.checkpoints.lock = lock
    try:
        while not run.should_stop():
            for _, report in pool.receive(timeout=0.1):
                account(report)
            run.workers_replaced(pool.replace_dead())
    finally:
        stop_workers()
        run.on_close.remove(stop_workers)
