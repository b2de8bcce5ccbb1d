"""TimeTrack as a Gymnasium citizen: registration, check_env, seeding, pickling, argument errors."""

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import nalu_rl.envs as envs
from nalu_rl.envs import TimeTrackEnv, TimeTrackVectorEnv


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


def rollout(env: TimeTrackEnv, seed: int, steps: int) -> list:
    """Observations, rewards, flags and infos of `steps` random-action steps, resetting at episode ends."""
    actions = np.random.default_rng(seed).integers(0, 5, steps)
    obs, info = env.reset(seed=seed)
    record = [(obs, info)]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(int(action))
        record.append((obs, reward, terminated, truncated, info))
        if terminated:
            record.append(env.reset())
    return record


def assert_same(record_a: list, record_b: list) -> None:
    assert len(record_a) == len(record_b)
    for item_a, item_b in zip(record_a, record_b, strict=True):
        for a, b in zip(item_a, item_b, strict=True):
            if isinstance(a, dict) and isinstance(next(iter(a.values())), np.ndarray):
                assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
            else:
                assert a == b


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
@pytest.mark.parametrize("stimulus", ["onset", "always"])
def test_check_env_passes_without_warnings(obs_mode, stimulus):
    env = gym.make(envs.ENV_ID, obs_mode=obs_mode, stimulus=stimulus)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_make_and_make_vec_build_the_registered_envs():
    assert envs.ENV_ID == "nalu_rl/TimeTrack-v0"
    single = gym.make(envs.ENV_ID, obs_mode="symbolic", delay_range=(3, 3))
    assert isinstance(single.unwrapped, TimeTrackEnv)
    assert single.reset(seed=0)[1]["delay"] == 3
    vector = gym.make_vec(envs.ENV_ID, num_envs=3, obs_mode="symbolic")
    assert isinstance(vector, TimeTrackVectorEnv) and vector.num_envs == 3
    assert vector.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert vector.single_observation_space == single.observation_space
    assert vector.reset(seed=0)[0]["grid"].shape == (3, 2, 5, 5)


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
def test_two_envs_with_the_same_seed_give_identical_200_step_rollouts(obs_mode):
    record_a = rollout(TimeTrackEnv(obs_mode=obs_mode), seed=11, steps=200)
    record_b = rollout(TimeTrackEnv(obs_mode=obs_mode), seed=11, steps=200)
    assert_same(record_a, record_b)
    other = rollout(TimeTrackEnv(obs_mode=obs_mode), seed=12, steps=200)
    assert [r[1] for r in other if len(r) == 2] != [r[1] for r in record_a if len(r) == 2]


def test_reset_without_seed_continues_the_seeded_sequence():
    env_a, env_b = TimeTrackEnv(obs_mode="symbolic"), TimeTrackEnv(obs_mode="symbolic")
    env_a.reset(seed=4)
    env_b.reset(seed=4)
    # Past one block of pre-drawn episodes, so the refill is exercised too.
    infos_a = [env_a.reset()[1] for _ in range(600)]
    infos_b = [env_b.reset()[1] for _ in range(600)]
    assert infos_a == infos_b and len({tuple(i.values()) for i in infos_a}) > 50


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
def test_env_pickles_mid_episode_and_the_copy_continues_identically(obs_mode):
    env = TimeTrackEnv(obs_mode=obs_mode, render_mode="rgb_array")
    env.reset(seed=2)
    env.step(0)
    env.render()  # a loaded font must not stop pickling
    clone = pickle.loads(pickle.dumps(env))
    for action in [1, 3, 4, 0, 2] * 10:
        result, cloned = env.step(action), clone.step(action)
        assert np.array_equal(result[0]["stimulus"], cloned[0]["stimulus"]) and result[1:] == cloned[1:]
        if result[2]:
            assert_same([env.reset()], [clone.reset()])
    vector = TimeTrackVectorEnv(4, obs_mode=obs_mode)
    vector.reset(seed=0)
    vector_clone = pickle.loads(pickle.dumps(vector))
    actions = np.array([0, 1, 2, 3])
    assert np.array_equal(vector.step(actions)[1], vector_clone.step(actions)[1])


def test_observations_are_new_arrays_every_call():
    env = TimeTrackEnv()
    first, _ = env.reset(seed=0)
    second, *_ = env.step(4)
    assert not np.shares_memory(first["pixels"], second["pixels"])
    vector = TimeTrackVectorEnv(2)
    first, _ = vector.reset(seed=0)
    second, *_ = vector.step(np.array([4, 4]))
    assert not np.shares_memory(first["pixels"], second["pixels"])


INVALID_ARGUMENTS = [
    ({"size": 1}, "size"),
    ({"size": 2.5}, "size"),
    ({"delay_range": (5, 4)}, "delay_range"),
    ({"delay_range": (0, 4)}, "delay_range"),
    ({"delay_range": (-3, -1)}, "delay_range"),
    ({"delay_range": (5, 2000)}, "delay_range"),
    ({"delay_range": 5}, "delay_range"),
    ({"max_delay": 0}, "max_delay"),
    ({"slack": -1}, "slack"),
    ({"obs_mode": "rgb"}, "obs_mode"),
    ({"stimulus": "never"}, "stimulus"),
    ({"reward_mode": "sparse"}, "reward_mode"),
    ({"render_mode": "ansi"}, "render_mode"),
    ({"cell_px": 0}, "cell_px"),
]


@pytest.mark.parametrize(("kwargs", "name"), INVALID_ARGUMENTS)
@pytest.mark.parametrize("env_class", ["single", "vector"])
def test_each_invalid_argument_raises_value_error_naming_it(kwargs, name, env_class):
    value = repr(next(iter(kwargs.values())))
    with pytest.raises(ValueError, match=name) as error:
        TimeTrackEnv(**kwargs) if env_class == "single" else TimeTrackVectorEnv(2, **kwargs)
    assert value in str(error.value)


def test_bad_num_envs_raises_value_error_naming_it():
    for num_envs in (0, -2, 1.5):
        with pytest.raises(ValueError, match="num_envs"):
            TimeTrackVectorEnv(num_envs)


@pytest.mark.parametrize("delay", [0, -1, 1001, 2.0])
def test_reset_delay_outside_one_to_max_delay_raises_value_error(delay):
    with pytest.raises(ValueError, match=r"delay.*" + repr(delay)):
        TimeTrackEnv().reset(seed=0, options={"delay": delay})
    with pytest.raises(ValueError, match="delay"):
        TimeTrackVectorEnv(2).reset(seed=0, options={"delay": delay})
    assert TimeTrackEnv(max_delay=50, delay_range=(1, 50)).reset(options={"delay": 50})[1]["delay"] == 50


@pytest.mark.parametrize("action", [-1, 5, 1.0, "UP", None])
def test_action_outside_the_space_raises_value_error(action):
    env = TimeTrackEnv(obs_mode="symbolic")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    vector = TimeTrackVectorEnv(3, obs_mode="symbolic")
    vector.reset(seed=0)
    bad_actions = [np.array([0, 1, 5]), np.array([-1, 0, 0]), np.array([0.0, 1.0, 2.0]), np.array([0, 1])]
    for actions in bad_actions:
        with pytest.raises(ValueError, match="actions"):
            vector.step(actions)


def test_stepping_an_ended_episode_asks_for_reset():
    env = TimeTrackEnv(obs_mode="symbolic", delay_range=(1, 1), slack=0)
    env.reset(seed=0)
    assert env.step(4)[2]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(4)
