"""IntervalTiming: the light, the due time 2T, rewards, timeout, ceiling, vector env, rendering.

Also the timing-task interface, which TimeTrack and IntervalTiming both follow.
"""

import dataclasses
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from conftest import PASS, arrive_at, path_to_target, play
from gymnasium.utils.env_checker import check_env

import nalu_rl.envs as envs
from nalu_rl.envs import (
    INTERVAL_TIMING_ID,
    IntervalTimingEnv,
    IntervalTimingVectorEnv,
    TimeTrackEnv,
    TimeTrackVectorEnv,
    TimingTask,
    is_timing_task,
    success_ceiling,
)
from nalu_rl.envs.rendering import HEADER_PX
from nalu_rl.envs.rules import IntervalTimingConfig, TimeTrackConfig

STATUS_LINE_TOP = 40  # the frame header's second line: the stimulus while running, then the outcome


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


@pytest.mark.parametrize("delay", [1, 4, 9])
def test_light_is_on_in_exactly_the_first_t_observations(delay):
    env = IntervalTimingEnv(obs_mode="symbolic")
    obs, _ = env.reset(seed=0, options={"delay": delay})
    stimuli = [float(obs["stimulus"][0])]
    for obs, *_ in play(env, [PASS] * 100):  # PASS never arrives: the episode runs to its timeout
        stimuli.append(float(obs["stimulus"][0]))
    assert stimuli[: 2 * delay + 1] == [1.0] * delay + [0.0] * (delay + 1)
    assert set(stimuli[delay:]) == {0.0}
    assert env.observation_space["stimulus"].high[0] == 1.0


def test_arrival_at_twice_the_delay_is_success_with_reward_one():
    env = IntervalTimingEnv(obs_mode="symbolic")
    _, reward, terminated, truncated, info = arrive_at(env, delay=5, arrival_time=10)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["outcome"] == "success" and info["success"] is True
    assert (info["t"], info["delay"], info["distance"]) == (10, 5, 0)


def test_arrival_at_the_delay_itself_is_early_not_success():
    env = IntervalTimingEnv(obs_mode="symbolic")
    _, reward, _, _, info = arrive_at(env, delay=6, arrival_time=6)
    assert info["outcome"] == "early" and info["success"] is False
    assert reward == -1.0  # six steps before the due time 12


@pytest.mark.parametrize(("arrival_time", "outcome"), [(9, "early"), (11, "late")])
def test_arrival_one_step_off_twice_the_delay_gives_half_reward(arrival_time, outcome):
    env = IntervalTimingEnv(obs_mode="symbolic")
    _, reward, terminated, _, info = arrive_at(env, delay=5, arrival_time=arrival_time)
    assert reward == 0.5 and terminated
    assert info["outcome"] == outcome and info["success"] is False


def test_graded_reward_falls_by_half_per_step_off_and_stops_at_minus_one():
    env = IntervalTimingEnv(obs_mode="symbolic", slack=20)
    rewards = [arrive_at(env, delay=5, arrival_time=t)[1] for t in (8, 12, 13, 14, 16)]
    assert rewards == [0.0, 0.0, -0.5, -1.0, -1.0]


def test_arrival_while_the_light_is_on_is_early():
    env = IntervalTimingEnv(obs_mode="symbolic")
    obs, _ = env.reset(seed=3, options={"delay": 10})
    path = path_to_target(obs)
    results = play(env, path)
    observation, reward, terminated, _, info = results[-1]
    assert terminated and info["t"] == len(path) < 10
    assert observation["stimulus"][0] == 1.0  # the light was still on
    assert info["outcome"] == "early" and reward == max(-1.0, 1 - abs(len(path) - 20) / 2)


def test_exact_reward_mode_pays_one_only_at_twice_the_delay():
    env = IntervalTimingEnv(obs_mode="symbolic", reward_mode="exact")
    assert arrive_at(env, delay=5, arrival_time=10)[1] == 1.0
    assert arrive_at(env, delay=5, arrival_time=11)[1] == -1.0
    assert arrive_at(env, delay=5, arrival_time=9)[1] == -1.0


@pytest.mark.parametrize(("delay", "slack"), [(3, None), (3, 0), (7, 2)])
def test_no_arrival_by_twice_the_delay_plus_slack_times_out(delay, slack):
    env = IntervalTimingEnv(obs_mode="symbolic", slack=slack)
    env.reset(seed=0, options={"delay": delay})
    results = play(env, [PASS] * 100)
    _, reward, terminated, truncated, info = results[-1]
    expected_slack = 2 * (5 - 1) if slack is None else slack
    assert len(results) == info["t"] == 2 * delay + expected_slack
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["outcome"] == "timeout" and info["success"] is False
    assert all(r[1] == 0.0 and "outcome" not in r[4] for r in results[:-1])


def test_ceiling_is_the_chance_that_the_distance_is_at_most_twice_the_delay():
    env = IntervalTimingEnv()
    assert env.success_ceiling(1) == pytest.approx(0.34)  # P(d <= 2) on 5 x 5
    assert env.success_ceiling(2) == pytest.approx(0.7667, abs=1e-4)  # P(d <= 4)
    assert env.success_ceiling(3) == pytest.approx(0.9667, abs=1e-4)  # P(d <= 6)
    assert [env.success_ceiling(t) for t in (4, 12, 1000)] == [1.0, 1.0, 1.0]
    assert TimeTrackEnv().success_ceiling(1) == pytest.approx(0.1333, abs=1e-4)  # P(d <= 1)
    wide = IntervalTimingEnv(size=9)
    assert wide.success_ceiling(3) == success_ceiling(6, size=9) < 1.0
    assert IntervalTimingVectorEnv(2, size=9).success_ceiling(3) == wide.success_ceiling(3)
    with pytest.raises(ValueError, match="delay"):
        env.success_ceiling(0)


def test_random_placement_is_as_likely_to_succeed_as_the_ceiling_says():
    # An oracle that waits and then walks the shortest path succeeds exactly when distance <= 2T.
    env = IntervalTimingEnv(obs_mode="symbolic", delay_range=(1, 1))
    successes = 0
    env.reset(seed=5)
    episodes = 600
    for _ in range(episodes):
        obs, _ = env.reset()
        path = path_to_target(obs)
        results = play(env, [PASS] * max(0, 2 - len(path)) + path + [PASS] * 20)
        successes += results[-1][4]["success"]
    assert abs(successes / episodes - env.success_ceiling(1)) < 0.06


def test_vector_env_turns_the_light_off_after_each_envs_own_delay():
    vector = IntervalTimingVectorEnv(64, obs_mode="symbolic", delay_range=(1, 6))
    obs, info = vector.reset(seed=1)
    for _ in range(12):
        light = obs["stimulus"][:, 0]
        assert np.array_equal(light, (info["t"] < info["delay"]).astype(np.float32))
        obs, _, _, _, info = vector.step(np.full(64, PASS))
    assert obs in vector.observation_space


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
def test_check_env_passes_without_warnings(obs_mode):
    env = gym.make(INTERVAL_TIMING_ID, obs_mode=obs_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_make_and_make_vec_build_the_registered_interval_envs():
    assert INTERVAL_TIMING_ID == "nalu_rl/IntervalTiming-v0" and envs.ENV_ID == "nalu_rl/TimeTrack-v0"
    single = gym.make(INTERVAL_TIMING_ID, obs_mode="symbolic", delay_range=(3, 3))
    assert isinstance(single.unwrapped, IntervalTimingEnv)
    assert single.reset(seed=0)[1]["delay"] == 3
    vector = gym.make_vec(INTERVAL_TIMING_ID, num_envs=3, obs_mode="symbolic")
    assert isinstance(vector, IntervalTimingVectorEnv) and vector.num_envs == 3
    assert vector.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert vector.single_observation_space == single.observation_space
    assert vector.reset(seed=0)[0]["grid"].shape == (3, 2, 5, 5)


def test_arguments_are_time_tracks_without_stimulus():
    time_track = {f.name for f in dataclasses.fields(TimeTrackConfig) if f.init}
    interval = {f.name for f in dataclasses.fields(IntervalTimingConfig) if f.init}
    assert interval == time_track - {"stimulus"}
    with pytest.raises(TypeError, match="stimulus"):
        IntervalTimingEnv(stimulus="always")
    with pytest.raises(TypeError, match="stimulus"):
        IntervalTimingVectorEnv(2, stimulus="always")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"size": 1}, "size"),
        ({"delay_range": (5, 4)}, "delay_range"),
        ({"delay_range": (0, 4)}, "delay_range"),
        ({"max_delay": 0}, "max_delay"),
        ({"slack": -1}, "slack"),
        ({"obs_mode": "rgb"}, "obs_mode"),
        ({"reward_mode": "sparse"}, "reward_mode"),
        ({"render_mode": "ansi"}, "render_mode"),
        ({"cell_px": 0}, "cell_px"),
    ],
)
def test_each_invalid_argument_raises_value_error_naming_it(kwargs, name):
    for make in (IntervalTimingEnv, lambda **options: IntervalTimingVectorEnv(2, **options)):
        with pytest.raises(ValueError, match=name) as error:
            make(**kwargs)
        assert repr(next(iter(kwargs.values()))) in str(error.value)


@pytest.mark.parametrize("delay", [0, 1001, 2.0])
def test_reset_delay_outside_one_to_max_delay_raises_value_error(delay):
    with pytest.raises(ValueError, match="delay"):
        IntervalTimingEnv().reset(seed=0, options={"delay": delay})
    with pytest.raises(ValueError, match="delay"):
        IntervalTimingVectorEnv(2).reset(seed=0, options={"delay": delay})


@pytest.mark.parametrize("obs_mode", ["pixels", "symbolic"])
def test_env_pickles_mid_episode_and_the_copy_continues_identically(obs_mode):
    env = IntervalTimingEnv(obs_mode=obs_mode, render_mode="rgb_array")
    env.reset(seed=2)
    env.step(0)
    env.render()
    clone = pickle.loads(pickle.dumps(env))
    for action in [1, 3, 4, 0, 2] * 6:
        result, cloned = env.step(action), clone.step(action)
        assert np.array_equal(result[0]["stimulus"], cloned[0]["stimulus"]) and result[1:] == cloned[1:]
        if result[2]:
            assert env.reset()[1] == clone.reset()[1]
    vector = IntervalTimingVectorEnv(4, obs_mode=obs_mode)
    vector.reset(seed=0)
    vector_clone = pickle.loads(pickle.dumps(vector))
    actions = np.array([0, 1, 2, 3])
    assert np.array_equal(vector.step(actions)[1], vector_clone.step(actions)[1])


TIMING_ENVS = {
    "TimeTrack": (TimeTrackEnv, TimeTrackVectorEnv),
    "IntervalTiming": (IntervalTimingEnv, IntervalTimingVectorEnv),
}


@pytest.mark.parametrize("task", TIMING_ENVS)
def test_single_vector_and_wrapped_envs_of_both_tasks_are_timing_tasks(task):
    single_class, vector_class = TIMING_ENVS[task]
    single = single_class(delay_range=(3, 9), max_delay=40)
    vector = vector_class(2, delay_range=(3, 9), max_delay=40)
    for env in (single, vector, gym.wrappers.RecordEpisodeStatistics(single)):
        assert is_timing_task(env)
        assert env.unwrapped.delay_range == (3, 9) and env.unwrapped.max_delay == 40
    assert isinstance(single, TimingTask) and isinstance(vector, TimingTask)
    assert single.metadata["task_options"] == vector.metadata["task_options"]
    assert set(single.metadata["task_options"]) <= set(envs.TASK_OPTIONS)


def test_task_options_are_every_option_for_timetrack_and_all_but_stimulus_for_intervaltiming():
    assert TimeTrackEnv.metadata["task_options"] == (
        "obs_mode",
        "size",
        "delay_range",
        "stimulus",
        "reward_mode",
    )
    assert IntervalTimingEnv.metadata["task_options"] == ("obs_mode", "size", "delay_range", "reward_mode")


def test_a_generic_gymnasium_env_is_not_a_timing_task():
    cartpole = gym.make("CartPole-v1")
    assert not is_timing_task(cartpole)
    assert not is_timing_task(object())


@pytest.mark.parametrize("task", TIMING_ENVS)
def test_info_success_is_set_on_the_last_step_of_both_envs(task):
    single_class, vector_class = TIMING_ENVS[task]
    single = single_class(obs_mode="symbolic", delay_range=(1, 1), slack=0)
    _, info = single.reset(seed=0)
    assert "success" not in info
    due_time = 1 if task == "TimeTrack" else 2
    results = play(single, [PASS] * 5)
    assert len(results) == due_time and results[-1][4]["success"] is False
    assert all("success" not in r[4] for r in results[:-1])
    # Arrival on time: success is True.
    single = single_class(obs_mode="symbolic")
    _, _, _, _, info = arrive_at(single, delay=5, arrival_time=5 * due_time)
    assert info["success"] is True and info["outcome"] == "success"

    vector = vector_class(64, obs_mode="symbolic", delay_range=(1, 2), slack=1)
    vector.reset(seed=0)
    rng = np.random.default_rng(0)
    successes = endings = 0
    for _ in range(100):
        _, _, terminated, _, info = vector.step(rng.integers(0, 5, 64))
        assert info["success"].dtype == np.bool_ and np.array_equal(info["_success"], terminated)
        assert np.array_equal(info["success"], info["outcome"] == "success")
        successes += info["success"].sum()
        endings += terminated.sum()
    assert 0 < successes < endings


def test_rgb_frame_shows_the_light_going_off_at_t_equal_t():
    env = IntervalTimingEnv(obs_mode="symbolic", render_mode="rgb_array")
    env.reset(seed=0, options={"delay": 3})
    frames = [env.render()]
    for _ in range(4):
        env.step(PASS)
        frames.append(env.render())
    assert frames[0].shape[0] >= 256 and frames[0].shape[1] >= 256 and frames[0].dtype == np.uint8
    status = [frame[STATUS_LINE_TOP:HEADER_PX] for frame in frames]
    assert np.array_equal(status[0], status[2])  # light on at t = 0 and t = 2
    assert not np.array_equal(status[2], status[3])  # off at t = 3
    assert np.array_equal(status[3], status[4])
    assert not np.array_equal(frames[0][:STATUS_LINE_TOP], frames[1][:STATUS_LINE_TOP])  # t is shown
    vector = IntervalTimingVectorEnv(2, obs_mode="symbolic", render_mode="rgb_array")
    vector.reset(seed=0, options={"delay": 3})
    assert np.array_equal(vector.render(), frames[0])
    env.close()


def test_human_mode_opens_a_window_titled_intervaltiming_and_close_shuts_it():
    pygame = pytest.importorskip("pygame")
    env = IntervalTimingEnv(obs_mode="symbolic", render_mode="human")
    env.metadata = {**env.metadata, "render_fps": 1000}  # do not slow the test down
    env.reset(seed=0)
    env.step(PASS)
    assert pygame.display.get_init() and pygame.display.get_caption()[0] == "IntervalTiming"
    env.close()
    assert not pygame.display.get_init()
