"""The multiprocess runtimes: actor processes feeding a learner, hogwild workers, and their faults."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import EASY, random_policy_success_rate

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint

# How long a test waits for something that happens in well under a second on a quiet machine (an
# actor started, a process exited): generous, so that a busy machine only makes a test slower. The
# promises about time are measured by scripts/measure_stop_latency.py, not by these waits.
PATIENCE_S = 120.0

# The 5 s within which a stopped run has stopped its workers and written its checkpoint, as the run
# itself measures it; on CI machines (CI set), whose cores are shared, a multiple of it.
STOP_PROMISE_S = 5.0 * (3 if os.environ.get("CI") else 1)


def group_members(group: int) -> dict[int, tuple[int, str]]:
    """Live (non-zombie) processes of process group `group`: pid -> (parent pid, command line).

    Only the group of a run this test started (in a session of its own) is looked at, so other
    processes on the machine cannot match.
    """
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return {}  # the kernel says: nothing left in the group, zombies included
    members = {}
    # /proc/<pid>/task/<tid>/children is not compiled into every kernel; each process's stat is.
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != group or fields[0] == "Z":
                continue
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        members[int(entry)] = (int(fields[1]), command.decode(errors="replace"))
    return members


def actor_pids(process: subprocess.Popen) -> set[int]:
    """The actor processes of a run started by `start_training` (its children running
    multiprocessing's spawn entry point; its resource tracker is not one)."""
    return {
        pid
        for pid, (parent, command) in group_members(process.pid).items()
        if parent == process.pid and "spawn_main" in command
    }


def wait_for(condition, timeout: float = PATIENCE_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def start_training(logdir: Path) -> subprocess.Popen:
    argv = [*EASY, "--actors", "2", "--total-steps", "100000000", "--checkpoint-interval-s", "1"]
    argv += ["--logdir", str(logdir)]
    return subprocess.Popen(
        [sys.executable, "-m", "nalu_rl.train", *argv],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
def test_multiprocess_learner_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    """Learning with the default, synchronous actors. With actors running ahead this LSTM policy
    stalled at 0.15 in 5 of 10 runs in bf16 (docs/TRAINING.md, "Determinism"; the runtime warns
    against it), so that path is checked for its lag, not for learning."""
    run = train.run_training(
        [*EASY, "--actors", "2", "--envs-per-actor", "16", "--buffers-per-actor", "1", "--synchronous"]
        + ["--total-steps", "150000", "--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.15), (run.window.success_rate(), chance)
    assert run.counters.worker_restarts == 0


@pytest.mark.slow
def test_synchronous_actors_always_act_with_the_newest_weights(tmp_path: Path) -> None:
    """With --synchronous no batch is older than the learner's weights, and the learner scores the
    taken actions as the actors did; without it, actors run ahead and some batch lags."""
    common = [*EASY, "--actors", "2", "--envs-per-actor", "16", "--total-steps", "20000"]
    synchronous = train.run_training([*common, "--synchronous", "--logdir", str(tmp_path / "sync")])
    assert synchronous.updates >= 50
    assert synchronous.counters.max_policy_lag == 0
    assert synchronous.last_metrics["loss/policy_log_ratio"] < 1e-4
    ahead = train.run_training([*common, "--no-synchronous", "--logdir", str(tmp_path / "async")])
    assert ahead.counters.max_policy_lag >= 1


@pytest.mark.slow
def test_hogwild_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    run = train.run_training(
        [*EASY, "--runtime", "hogwild", "--actors", "2", "--hogwild-envs", "16", "--total-steps", "80000"]
        + ["--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.1), (run.window.success_rate(), chance)
    # Every worker update went through the one shared Adam: its step count is the update count.
    assert float(load_checkpoint(tmp_path)["optimizer"]["state"][0]["step"]) == run.updates


@pytest.mark.slow
def test_killed_actor_is_replaced_and_sigint_stops_every_process_after_a_checkpoint(tmp_path: Path) -> None:
    process = start_training(tmp_path)
    try:
        assert wait_for(lambda: len(actor_pids(process)) == 2)
        victim = min(actor_pids(process))
        os.kill(victim, signal.SIGKILL)
        assert wait_for(lambda: len(actor_pids(process) - {victim}) == 2)
        assert process.poll() is None
        # The periodic checkpoint shows that the run went on learning with the replacement.
        checkpoint = tmp_path / "checkpoint.pt"
        assert wait_for(lambda: checkpoint.exists() and load_checkpoint(tmp_path)["steps"] > 0)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=PATIENCE_S)
        stderr = process.stderr.read()
        assert process.returncode == 0, stderr
        assert "stopped by SIGINT" in stderr and "1 dead worker replaced" in stderr, stderr
        # The run's own clock, from the signal to its workers stopped and its checkpoint written.
        latency = re.search(r"checkpoint written ([0-9.]+) s after SIGINT", stderr)
        assert latency and float(latency[1]) < STOP_PROMISE_S, stderr
        assert load_checkpoint(tmp_path)["steps"] > 0
        # No process of the run is left: not an actor, not multiprocessing's resource tracker.
        assert wait_for(lambda: not group_members(process.pid)), group_members(process.pid)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.mark.slow
def test_actors_that_keep_dying_before_any_step_stop_the_run_with_a_one_line_error(tmp_path: Path) -> None:
    process = start_training(tmp_path)
    killed: set[int] = set()
    try:
        deadline = time.monotonic() + PATIENCE_S
        while process.poll() is None and time.monotonic() < deadline:
            for pid in actor_pids(process) - killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            time.sleep(0.02)
        assert process.returncode == 1
        last_line = process.stderr.read().strip().splitlines()[-1]
        assert "worker processes died in a row without delivering a step" in last_line
        assert len(killed) >= 10
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def make_actor(num_envs: int = 8, agent: str = "lstm", **options):
    import multiprocessing

    from nalu_rl.agents import make_agent
    from nalu_rl.config import Config
    from nalu_rl.runtime.actor import Actor
    from nalu_rl.runtime.rollout import RolloutBuffers, WeightStore

    config = Config(agent=agent, obs="symbolic", size=3, delay_range=(1, 2), unroll_length=7, **options)
    from nalu_rl.envs import TimeTrackVectorEnv

    space = TimeTrackVectorEnv(1, **config.env_kwargs()).single_observation_space
    model = make_agent(config.agent, space).eval()
    buffers = RolloutBuffers(
        space, model.initial_state(num_envs), config.unroll_length, num_envs, 3, shared=False
    )
    weights = WeightStore(model, multiprocessing.get_context("spawn"))
    return Actor(config, model, num_envs, seed=5), buffers, weights, model


def test_unrolls_mark_autoreset_steps_and_episode_starts_across_unroll_boundaries() -> None:
    actor, buffers, _, _ = make_actor()
    for index in range(3):
        actor.unroll(buffers.slot(index))
    batch = buffers.batch([0, 1, 2])
    # Consecutive unrolls of the same envs: join them back into one timeline per env.
    terminated = batch.terminated.reshape(7, 3, 8).permute(1, 0, 2).reshape(21, 8)
    ignored = batch.ignored.reshape(7, 3, 8).permute(1, 0, 2).reshape(21, 8)
    rewards = batch.rewards.reshape(7, 3, 8).permute(1, 0, 2).reshape(21, 8)
    outcome = batch.outcome.reshape(7, 3, 8).permute(1, 0, 2).reshape(21, 8)
    starts = batch.episode_start.reshape(8, 3, 8)[:7].permute(1, 0, 2).reshape(21, 8)
    assert terminated.any(), "delays of 1..2 on a 3x3 grid must end episodes within 21 steps"
    assert not ignored[0].any() and starts[0].all()
    assert torch.equal(ignored[1:], terminated[:-1])  # the step after a terminated one is ignored
    assert torch.equal(starts[1:], ignored[:-1])  # and the observation it returns starts an episode
    assert (rewards[ignored] == 0).all()
    assert torch.equal(outcome >= 0, terminated)  # every ended episode reports its outcome
    # The bootstrap observation of an unroll is the first observation of the next one.
    assert torch.equal(buffers.tensors["obs.grid"][0][7], buffers.tensors["obs.grid"][1][0])


def test_weight_store_versions_and_pull_only_when_newer() -> None:
    actor, _, weights, model = make_actor()
    assert weights.pull(model, -1) == 0
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(1.0)
    first = next(model.parameters()).clone()
    assert weights.pull(model, 0) == 0  # same version: nothing loaded
    assert torch.equal(next(model.parameters()), first)
    assert weights.publish(model) == 1
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
    assert weights.pull(model, 0) == 1
    assert torch.equal(next(model.parameters()), first)


def test_unit_regularizer_follows_its_warm_up_and_nau_weights_stay_in_range() -> None:
    from nalu_rl.config import Config
    from nalu_rl.runtime.update import Learner, compute_loss
    from nalu_rl.units import NAU

    schedule = {"regularizer_weight": 0.5, "regularizer_start_steps": 100, "regularizer_end_steps": 300}
    actor, buffers, _, model = make_actor(agent="nau", **schedule)
    config = Config(agent="nau", obs="symbolic", **schedule)
    actor.unroll(buffers.slot(0))
    batch = buffers.batch([0])
    weights = [
        compute_loss(model, batch, config, steps)[1]["loss/regularizer_weight"]
        for steps in (0, 100, 200, 300, 10_000)
    ]
    assert weights == [0.0, 0.0, 0.25, 0.5, 0.5]
    # A huge learning rate throws raw weights far out of [-1, 1]; the learner puts them back.
    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=1e4), config)
    assert learner.update(batch, steps=10_000) is not None
    units = [module for module in model.modules() if isinstance(module, NAU)]
    assert units
    for unit in units:
        assert unit.W.abs().max() <= 1.0


def test_learner_process_reuses_freed_memory_without_page_faults() -> None:
    """After `retain_freed_memory`, a large tensor freed and allocated again is not faulted in anew
    (without it glibc unmaps blocks above 32 MB on free, and each reuse page-faults every page)."""
    import subprocess
    import sys

    probe = (
        "import resource, sys, torch\n"
        "from nalu_rl.runtime.workers import retain_freed_memory\n"
        "if sys.argv[1] == 'retain': assert retain_freed_memory()\n"
        "for _ in range(10): torch.ones(64 * 2**20 // 4)\n"  # allocate, touch and free 64 MB
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "torch.ones(64 * 2**20 // 4)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )
    faults = {
        mode: int(subprocess.run([sys.executable, "-c", probe, mode], capture_output=True, check=True).stdout)
        for mode in ("default", "retain")
    }
    pages = 64 * 2**20 // 4096
    assert faults["default"] > pages // 2
    assert faults["retain"] < pages // 10


def close_pipe_then_exit_or_echo(generation: int, link, may_exit) -> None:
    """A worker for the pool tests: the first closes its pipe and exits once `may_exit` is set, as an
    actor that died on an exception does (its pipe closes before its process ends); its successors
    send back every index they are handed."""
    if generation == 0:
        link.close()
        may_exit.wait(PATIENCE_S)
        return
    while True:
        index = link.recv()
        if index is None:
            return
        link.send(index)


def test_a_buffer_released_to_an_actor_whose_pipe_closed_goes_to_its_successor() -> None:
    import multiprocessing

    from nalu_rl.runtime.learner import ActorBuffers
    from nalu_rl.runtime.workers import WorkerPool

    starts = []
    context = multiprocessing.get_context("spawn")
    may_exit = context.Event()

    def worker_args(worker_id, link):
        starts.append(worker_id)
        return (len(starts) - 1, link, may_exit)

    pool = WorkerPool(context, 1, close_pipe_then_exit_or_echo, worker_args, name="test-worker")
    actor_buffers = ActorBuffers(pool, buffers_per_actor=2)
    pool.on_start = actor_buffers.hand_out
    try:
        pool.start_all()
        assert wait_for(lambda: not pool.receive(0.05) and pool.links[0] is None)
        assert pool.processes[0].is_alive()  # its pipe is closed, it has not exited yet
        actor_buffers.release(0, 1)  # used to fail: 'NoneType' object has no attribute 'send'
        may_exit.set()
        assert wait_for(lambda: not pool.processes[0].is_alive())
        assert pool.replace_dead() == 1
        echoed = []
        assert wait_for(lambda: echoed.extend(actor_buffers.filled(0.05)) or len(echoed) == 2)
        assert sorted(echoed) == [(0, 0), (0, 1)]
    finally:
        pool.close(timeout=1.0)
