"""`--runtime device`: the timing task as tensors, the policy and the learner in one process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import EASY, cli_exit_code, random_policy_success_rate

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.config import Config
from nalu_rl.runtime.device import DeviceActor, device_env_count
from nalu_rl.runtime.device_env import make_tensor_env

DEVICE = ["--runtime", "device", "--device", "cpu"]
PATIENCE_S = 120.0


def test_a_run_writes_a_complete_run_folder(tmp_path: Path) -> None:
    argv = [*DEVICE, "--agent", "nac", "--obs", "symbolic", "--total-steps", "3000", "--no-progress"]
    argv += ["--eval-episodes", "4", "--eval-max-delay", "6", "--logdir", str(tmp_path)]
    assert cli_exit_code(train.main, argv) == 0
    names = set(os.listdir(tmp_path))
    assert {
        "config.json",
        "checkpoint.pt",
        "run_status.json",
        "success_by_delay.csv",
        "success_by_delay.png",
    } <= names
    assert any(name.startswith("events.out.tfevents") for name in names)
    status = json.loads((tmp_path / "run_status.json").read_text())
    payload = load_checkpoint(tmp_path)
    assert status["state"] == "finished" and status["steps"] == payload["steps"] >= 3000
    assert payload["config"]["runtime"] == "device" and payload["updates"] >= 1


def test_a_non_timing_env_is_refused_in_one_line(capsys) -> None:
    code = cli_exit_code(train.main, [*DEVICE, "--env-id", "CartPole-v1", "--no-progress"])
    stderr = capsys.readouterr().err
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("error: --runtime device")
    assert "CartPole-v1" in stderr


def test_the_device_runtime_steps_the_envs_of_one_learner_batch() -> None:
    assert device_env_count(Config(actors=2, envs_per_actor=64)) == 128
    assert device_env_count(Config(actors=0, batch_unrolls=3, envs_per_actor=64)) == 192
    assert device_env_count(Config(actors=1, envs_per_actor=4096)) == 4096


def test_unrolls_on_the_device_mark_episode_ends_autoresets_and_starts() -> None:
    from nalu_rl.agents import make_agent

    config = Config(agent="lstm", obs="symbolic", size=3, delay_range=(1, 2), runtime="device")
    env = make_tensor_env(config, 8, "cpu", seed=5)
    model = make_agent("lstm", env.single_observation_space)
    actor = DeviceActor(model, env, unroll_length=7, precision="fp32", seed=5)
    # A batch is a view of the actor's tensors, valid until the next unroll: copy what the test reads.
    unrolls = []
    for _ in range(3):
        batch = actor.unroll()
        unrolls.append(
            {
                name: getattr(batch, name).clone()
                for name in ("terminated", "ignored", "episode_start", "outcome")
            }
        )
    terminated = torch.cat([unroll["terminated"] for unroll in unrolls])
    ignored = torch.cat([unroll["ignored"] for unroll in unrolls])
    # episode_start has unroll_length + 1 rows; the last row of an unroll is the first of the next.
    starts = torch.cat(
        [unrolls[0]["episode_start"][:1]] + [unroll["episode_start"][1:] for unroll in unrolls]
    )
    outcome = torch.cat([unroll["outcome"] for unroll in unrolls])
    assert bool(terminated.any())
    # The step after an episode ended is ignored (autoreset), and the observation after it starts one.
    assert torch.equal(ignored[1:], terminated[:-1])
    assert torch.equal(starts[1:], ignored)
    assert bool(starts[0].all())
    assert torch.equal(outcome >= 0, terminated)


@pytest.mark.slow
def test_the_device_runtime_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    run = train.run_training(
        [*EASY, *DEVICE, "--actors", "0", "--total-steps", "80000", "--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.15), (run.window.success_rate(), chance)


@pytest.mark.slow
def test_sigint_stops_a_device_run_after_its_checkpoint(tmp_path: Path) -> None:
    argv = [*EASY, *DEVICE, "--total-steps", "100000000", "--checkpoint-interval-s", "1"]
    process = subprocess.Popen(
        [sys.executable, "-m", "nalu_rl.train", *argv, "--logdir", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        checkpoint = tmp_path / "checkpoint.pt"
        deadline = time.monotonic() + PATIENCE_S
        while not (checkpoint.exists() and load_checkpoint(tmp_path)["steps"] > 0):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=PATIENCE_S)
        stderr = process.stderr.read()
        assert process.returncode == 0, stderr
        assert "stopped by SIGINT" in stderr and "checkpoint written" in stderr, stderr
        status = json.loads((tmp_path / "run_status.json").read_text())
        assert status["state"] == "stopped" and status["steps"] == load_checkpoint(tmp_path)["steps"] > 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("obs", ["symbolic", "pixels"])
def test_a_device_run_on_cuda_keeps_its_rollouts_on_the_gpu(tmp_path: Path, obs: str) -> None:
    argv = ["--runtime", "device", "--device", "cuda", "--agent", "nac", "--obs", obs, "--no-progress"]
    argv += ["--actors", "1", "--envs-per-actor", "256", "--total-steps", "20000", "--eval-episodes", "0"]
    run = train.run_training([*argv, "--logdir", str(tmp_path)])
    assert run.steps >= 20000 and run.updates >= 3 and run.counters.bad_updates == 0
    assert next(run.model.parameters()).device.type == "cuda"
