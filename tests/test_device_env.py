"""The timing tasks as tensors (nalu_rl.runtime.device_env) play exactly as the numpy vector envs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nalu_rl.envs import IntervalTimingVectorEnv, TimeTrackVectorEnv
from nalu_rl.envs.rules import EPISODES_PER_DRAW, OUTCOME_NAMES, IntervalTimingConfig, TimeTrackConfig
from nalu_rl.runtime.device_env import DeviceUniforms, NumpyStreamUniforms, TimingTensorEnv

TASKS = {
    "TimeTrack": (TimeTrackVectorEnv, TimeTrackConfig),
    "IntervalTiming": (IntervalTimingVectorEnv, IntervalTimingConfig),
}


def check_tensor_env_plays_as_the_numpy_vector_env(task: str, obs_mode: str, device: str, steps: int) -> int:
    """Step the numpy vector env and the tensor env on `device` from the same seed and actions,
    asserting equal observations, rewards, terminations, outcomes and infos at every step; returns
    the fewest episodes an env played."""
    vector_class, config_class = TASKS[task]
    # A 3 x 3 grid and short delays: many episodes, every outcome, more than one block of draws.
    options = {"size": 3, "delay_range": (1, 3), "obs_mode": obs_mode}
    num_envs, seed = 6, 11
    vector = vector_class(num_envs, **options)
    tensor = TimingTensorEnv(
        config_class(**options), num_envs, device, NumpyStreamUniforms(num_envs, device, seed)
    )
    vector_obs, info = vector.reset(seed=seed)
    tensor_obs = tensor.reset()
    actions_by_step = np.random.default_rng(0).integers(0, 5, (steps, num_envs))
    outcomes, episodes = set(), np.zeros(num_envs, dtype=np.int64)
    for step in range(steps + 1):
        assert vector_obs.keys() == tensor_obs.keys()
        for key, value in vector_obs.items():
            assert tensor_obs[key].dtype == torch.from_numpy(value).dtype, key
            assert np.array_equal(tensor_obs[key].cpu().numpy(), value), (step, key)
        assert np.array_equal(tensor.delay.cpu().numpy(), info["delay"]), step
        assert np.array_equal(tensor.t.cpu().numpy(), info["t"]), step
        assert np.array_equal(tensor.distance().cpu().numpy(), info["distance"]), step
        if step == steps:
            break
        actions = actions_by_step[step]
        vector_obs, reward, terminated, truncated, info = vector.step(actions)
        tensor_obs, tensor_reward, tensor_terminated, outcome = tensor.step(
            torch.from_numpy(actions).to(device)
        )
        assert tensor_reward.dtype == torch.float32 and tensor_reward.device == torch.device(device)
        assert np.array_equal(tensor_reward.cpu().numpy(), reward), step
        assert np.array_equal(tensor_terminated.cpu().numpy(), terminated), step
        assert np.array_equal(OUTCOME_NAMES[outcome.cpu().numpy()], info["outcome"]), step
        outcomes.update(info["outcome"][terminated])
        episodes += terminated
    assert outcomes == {"success", "early", "late", "timeout"}
    return episodes.min()


@pytest.mark.parametrize("obs_mode", ["symbolic", "pixels"])
@pytest.mark.parametrize("task", sorted(TASKS))
def test_tensor_env_plays_exactly_as_the_numpy_vector_env_from_the_same_seed_and_actions(
    task: str, obs_mode: str
) -> None:
    fewest_episodes = check_tensor_env_plays_as_the_numpy_vector_env(task, obs_mode, "cpu", steps=3000)
    assert fewest_episodes > EPISODES_PER_DRAW  # every env drew more than one block of episodes


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("obs_mode", ["symbolic", "pixels"])
@pytest.mark.parametrize("task", sorted(TASKS))
def test_tensor_env_on_cuda_plays_exactly_as_the_numpy_vector_env(task: str, obs_mode: str) -> None:
    check_tensor_env_plays_as_the_numpy_vector_env(task, obs_mode, "cuda", steps=600)


def test_device_uniforms_draw_valid_reproducible_episodes() -> None:
    config = TimeTrackConfig(size=5, delay_range=(5, 12), obs_mode="symbolic")

    def play(seed: int) -> list[torch.Tensor]:
        env = TimingTensorEnv(config, 256, "cpu", DeviceUniforms(256, "cpu", seed))
        env.reset()
        starts = []
        for _ in range(40):
            starts.append(torch.stack([env.agent, env.target, env.delay]))
            env.step(torch.full((256,), 4))  # PASS: episodes end by timeout and restart
        return starts

    first, again, other = play(3), play(3), play(4)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first, other, strict=True))
    agents, targets, delays = torch.cat(first, dim=1)
    assert bool((agents != targets).all())
    assert set(delays.tolist()) == set(range(5, 13))
    assert set(agents.tolist()) == set(range(25)) == set(targets.tolist())
