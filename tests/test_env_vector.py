"""The native vector env: the same episodes as single envs, NEXT_STEP autoreset, batched infos."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import check_vector_env_matches_single_envs

import nalu_rl.envs as envs
from nalu_rl.envs import (
    OUTCOMES,
    IntervalTimingEnv,
    IntervalTimingVectorEnv,
    TimeTrackEnv,
    TimeTrackVectorEnv,
)


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
@pytest.mark.parametrize(
    ("single_class", "vector_class", "task_kwargs"),
    [
        # Short episodes: each env autoresets more often than one block of pre-drawn episodes holds.
        (TimeTrackEnv, TimeTrackVectorEnv, {"delay_range": (1, 2), "slack": 1, "stimulus": "onset"}),
        (IntervalTimingEnv, IntervalTimingVectorEnv, {"delay_range": (1, 1), "slack": 1}),
    ],
    ids=["time-track", "interval-timing"],
)
def test_env_i_of_a_vector_env_seeded_s_matches_a_single_env_seeded_s_plus_i(
    obs_mode, single_class, vector_class, task_kwargs
):
    num_envs, steps, seed = 4, 1100, 21  # 4,400 env steps
    kwargs = {"obs_mode": obs_mode, **task_kwargs}
    vector = vector_class(num_envs, **kwargs)
    singles = [single_class(**kwargs) for _ in range(num_envs)]
    assert check_vector_env_matches_single_envs(vector, singles, steps, seed) == set(OUTCOMES)


def test_autoreset_step_ignores_the_action_and_returns_reward_zero():
    vector = TimeTrackVectorEnv(3, obs_mode="symbolic", delay_range=(1, 1), slack=0)
    vector.reset(seed=0)
    _, reward, terminated, truncated, info = vector.step(np.array([4, 4, 4]))
    assert terminated.all() and not truncated.any() and (reward == -1).all()
    assert info["outcome"].tolist() == ["timeout"] * 3 and info["_outcome"].all()
    obs, reward, terminated, truncated, info = vector.step(np.array([0, 1, 2]))
    assert (reward == 0).all() and not terminated.any() and not truncated.any()
    assert (info["t"] == 0).all() and not info["_outcome"].any()
    assert (obs["stimulus"][:, 0] == 1).all()


def test_fixed_delay_by_one_value_range_holds_across_autoresets():
    vector = TimeTrackVectorEnv(16, obs_mode="symbolic", delay_range=(7, 7))
    _, info = vector.reset(seed=3)
    rng = np.random.default_rng(0)
    ended_episodes = 0
    for _ in range(100):
        obs, _, terminated, _, info = vector.step(rng.integers(0, 5, 16))
        assert (info["delay"] == 7).all()
        assert set(obs["stimulus"][info["t"] == 0, 0]) <= {7.0}
        ended_episodes += terminated.sum()
    assert ended_episodes > 50


def test_reset_delay_option_fixes_the_first_episode_of_every_env():
    vector = TimeTrackVectorEnv(8, obs_mode="symbolic", delay_range=(5, 12))
    obs, info = vector.reset(seed=0, options={"delay": 30})
    assert (info["delay"] == 30).all() and (obs["stimulus"][:, 0] == 30).all()


def test_observations_rewards_and_flags_are_batched_arrays():
    vector = TimeTrackVectorEnv(4)
    obs, _ = vector.reset(seed=0)
    assert obs["pixels"].shape == (4, 56, 56, 3) and obs["pixels"].dtype == np.uint8
    assert obs["stimulus"].shape == (4, 1) and obs["stimulus"].dtype == np.float32
    assert obs in vector.observation_space
    obs, reward, terminated, truncated, _ = vector.step(vector.action_space.sample())
    assert obs in vector.observation_space
    assert reward.shape == terminated.shape == truncated.shape == (4,)
    assert terminated.dtype == truncated.dtype == np.bool_


def test_placements_are_uniform_over_distinct_cells_and_delays():
    vector = TimeTrackVectorEnv(4096, obs_mode="symbolic", delay_range=(5, 12))
    obs, info = vector.reset(seed=0)
    agent = obs["grid"][:, 0].reshape(4096, -1).argmax(1)
    target = obs["grid"][:, 1].reshape(4096, -1).argmax(1)
    assert (agent != target).all()
    for values, count in ((agent, 25), (target, 25), (info["delay"] - 5, 8)):
        frequencies = np.bincount(values, minlength=count) / len(values)
        assert frequencies.shape == (count,)
        assert np.abs(frequencies - 1 / count).max() < 0.3 / count


def test_stepping_before_reset_asks_for_reset():
    with pytest.raises(RuntimeError, match="reset"):
        TimeTrackVectorEnv(2).step(np.array([0, 0]))


def test_sync_vector_env_of_single_envs_agrees_with_the_native_vector_env():
    sync = gym.make_vec(envs.ENV_ID, num_envs=3, vectorization_mode="sync", obs_mode="symbolic")
    native = gym.make_vec(envs.ENV_ID, num_envs=3, obs_mode="symbolic")
    sync_obs, _ = sync.reset(seed=8)
    native_obs, _ = native.reset(seed=8)
    rng = np.random.default_rng(1)
    for _ in range(60):
        assert np.array_equal(sync_obs["grid"], native_obs["grid"])
        actions = rng.integers(0, 5, 3)
        sync_obs, sync_reward, sync_terminated, *_ = sync.step(actions)
        native_obs, native_reward, native_terminated, *_ = native.step(actions)
        assert np.array_equal(sync_reward, native_reward)
        assert np.array_equal(sync_terminated, native_terminated)
