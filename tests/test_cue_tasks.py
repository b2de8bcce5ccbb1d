"""The five cue tasks as Gymnasium citizens and timing tasks: what they share.

Registration, check_env, seeding, pickling, single = vector, argument errors, and a scripted policy
that knows T reaching the ceiling 1.0 at every T while a fixed-time policy succeeds at one T at most.
The task-specific rules are in test_cue_task_rules.py.
"""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import nalu_rl.envs as envs
from nalu_rl.envs import TASK_OPTIONS, TimingTask, is_timing_task
from nalu_rl.envs.interval_discrimination import FIRST_LONGER, SECOND_LONGER

TASKS = {
    "ReadySetGo": (envs.ReadySetGoEnv, envs.ReadySetGoVectorEnv),
    "ScaledReproduction": (envs.ScaledReproductionEnv, envs.ScaledReproductionVectorEnv),
    "IntervalDiscrimination": (envs.IntervalDiscriminationEnv, envs.IntervalDiscriminationVectorEnv),
    "DistractorReproduction": (envs.DistractorReproductionEnv, envs.DistractorReproductionVectorEnv),
    "ContinuationTapping": (envs.ContinuationTappingEnv, envs.ContinuationTappingVectorEnv),
}
CEILING_DELAYS = [*range(1, 13), 13, 20, 50, 100, 200, 500, 1000]


def env_id(task: str) -> str:
    return f"nalu_rl/{task}-v0"


def rollout(env: gym.Env, seed: int, steps: int) -> list:
    """Observations, rewards, flags and infos of `steps` random-action steps, resetting at episode ends."""
    actions = np.random.default_rng(seed).integers(0, env.action_space.n, steps)
    obs, info = env.reset(seed=seed)
    record = [(obs["cues"].tolist(), info)]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(int(action))
        record.append((obs["cues"].tolist(), reward, terminated, truncated, info))
        if terminated:
            obs, info = env.reset()
            record.append((obs["cues"].tolist(), info))
    return record


def scripted_actions(task: str, obs: dict, info: dict, first_flash: np.ndarray) -> np.ndarray:
    """The actions of a policy that knows T (from info["delay"]) and presses exactly on time, per env
    of a vector env; for IntervalDiscrimination it reads the second flash's time (`first_flash`)."""
    delay, t = info["delay"], info["t"]
    if task == "IntervalDiscrimination":
        due = 2 * delay + np.maximum(1, delay // 4)
        answer = np.where(first_flash > due - first_flash, FIRST_LONGER, SECOND_LONGER)
        return np.where(t == due, answer, 0)
    if task == "ContinuationTapping":
        return ((t >= 3 * delay) & (t % delay == 0)).astype(np.int64)
    factor = 3 if task == "ScaledReproduction" else 2
    return (t == factor * delay).astype(np.int64)


def play_vector(task: str, policy, delay: int, num_envs: int, **kwargs) -> tuple[int, int]:
    """(successes, episodes): one episode per env of a vector env at delay T under `policy(obs, info,
    first_flash)`."""
    env = TASKS[task][1](num_envs, delay_range=(delay, delay), **kwargs)
    obs, info = env.reset(seed=delay)
    first_flash = np.zeros(num_envs, dtype=np.int64)
    running = np.ones(num_envs, dtype=bool)
    successes = 0
    while running.any():
        flash = obs["cues"][:, 0] == 1
        first_flash = np.where(flash & (info["t"] > 0) & (first_flash == 0), info["t"], first_flash)
        obs, _, terminated, _, info = env.step(policy(obs, info, first_flash))
        successes += int((info["success"] & running).sum())
        running &= ~terminated
    return successes, num_envs


@pytest.mark.parametrize("task", TASKS)
def test_check_env_passes_without_warnings(task):
    for kwargs in ({}, {"render_mode": "ansi", "reward_mode": "exact"}):
        env = gym.make(env_id(task), **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        env.close()


@pytest.mark.parametrize("task", TASKS)
def test_make_and_make_vec_build_the_registered_single_and_native_vector_envs(task):
    single_class, vector_class = TASKS[task]
    assert env_id(task) in envs.CUE_TASK_IDS
    single = gym.make(env_id(task), delay_range=(3, 3))
    assert isinstance(single.unwrapped, single_class) and single.reset(seed=0)[1]["delay"] == 3
    vector = gym.make_vec(env_id(task), num_envs=3)
    assert isinstance(vector, vector_class) and vector.num_envs == 3
    assert vector.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert vector.single_observation_space == single.observation_space
    assert list(single.observation_space.spaces) == ["cues"]  # no stimulus: T is never shown
    assert single.action_space.n == vector.single_action_space.n


@pytest.mark.parametrize("task", TASKS)
def test_single_vector_and_wrapped_envs_are_timing_tasks(task):
    single_class, vector_class = TASKS[task]
    single = single_class(delay_range=(3, 9), max_delay=40)
    vector = vector_class(2, delay_range=(3, 9), max_delay=40)
    for env in (single, vector, gym.wrappers.RecordEpisodeStatistics(single)):
        assert is_timing_task(env) and isinstance(env.unwrapped, TimingTask)
        assert env.unwrapped.delay_range == (3, 9) and env.unwrapped.max_delay == 40
    assert single.metadata["task_options"] == ("delay_range", "reward_mode")
    assert set(single.metadata["task_options"]) <= set(TASK_OPTIONS)
    assert vector.metadata["task_options"] == single.metadata["task_options"]
    assert single.metadata["delay_meaning"]
    defaults = single_class()
    assert (defaults.delay_range, defaults.max_delay, defaults.config.slack) == ((5, 12), 1000, 8)
    assert [defaults.success_ceiling(t) for t in (1, 7, 1000)] == [1.0, 1.0, 1.0]
    assert defaults.success_ceiling_exact(13) == 1
    with pytest.raises(ValueError, match="delay"):
        defaults.success_ceiling(0)


@pytest.mark.parametrize("task", TASKS)
def test_two_envs_with_the_same_seed_give_identical_200_step_rollouts(task):
    single_class = TASKS[task][0]
    record_a = rollout(single_class(delay_range=(1, 6)), seed=11, steps=200)
    assert record_a == rollout(single_class(delay_range=(1, 6)), seed=11, steps=200)
    assert record_a != rollout(single_class(delay_range=(1, 6)), seed=12, steps=200)


@pytest.mark.parametrize("task", TASKS)
def test_env_pickles_mid_episode_and_the_copy_continues_identically(task):
    single_class, vector_class = TASKS[task]
    env = single_class(delay_range=(2, 5), render_mode="ansi")
    env.reset(seed=2)
    env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    actions = np.random.default_rng(0).integers(0, env.action_space.n, 100)
    for action in actions:
        result, cloned = env.step(int(action)), clone.step(int(action))
        assert result[0]["cues"].tolist() == cloned[0]["cues"].tolist() and result[1:] == cloned[1:]
        assert env.render() == clone.render()
        if result[2]:
            assert env.reset()[1] == clone.reset()[1]
    vector = vector_class(4)
    vector.reset(seed=0)
    vector_clone = pickle.loads(pickle.dumps(vector))
    for _ in range(30):
        presses = np.ones(4, dtype=np.int64)
        step, cloned = vector.step(presses), vector_clone.step(presses)
        assert np.array_equal(step[0]["cues"], cloned[0]["cues"]) and np.array_equal(step[1], cloned[1])


@pytest.mark.parametrize("task", TASKS)
def test_env_i_of_a_vector_env_plays_like_a_single_env_seeded_seed_plus_i(task):
    single_class, vector_class = TASKS[task]
    num_envs, seed, steps = 3, 5, 300
    kwargs = {"delay_range": (1, 4), "slack": 2}
    actions = np.random.default_rng(1).integers(0, single_class().action_space.n, (steps, num_envs))
    # Presses are rare enough that episodes reach their cues, and ends are frequent.
    actions = np.where(np.random.default_rng(2).random((steps, num_envs)) < 0.8, 0, actions)
    vector = vector_class(num_envs, **kwargs)
    obs, info = vector.reset(seed=seed)
    vector_record = [
        [(obs["cues"][i].tolist(), int(info["delay"][i]), int(info["t"][i]))] for i in range(num_envs)
    ]
    for row in actions:
        obs, reward, terminated, _, info = vector.step(row)
        for i in range(num_envs):
            ended = (str(info["outcome"][i]), bool(info["success"][i])) if info["_outcome"][i] else None
            step = (obs["cues"][i].tolist(), int(info["delay"][i]), int(info["t"][i]), float(reward[i]))
            vector_record[i].append((*step, bool(terminated[i]), ended))
    for i in range(num_envs):
        env = single_class(**kwargs)
        obs, info = env.reset(seed=seed + i)
        record = [(obs["cues"].tolist(), info["delay"], info["t"])]
        ended_before = False
        for row in actions:
            if ended_before:  # the vector env's autoreset step: the action is ignored, reward 0
                obs, info = env.reset()
                record.append((obs["cues"].tolist(), info["delay"], info["t"], 0.0, False, None))
                ended_before = False
                continue
            obs, reward, terminated, _, info = env.step(int(row[i]))
            ended = (info["outcome"], info["success"]) if terminated else None
            record.append((obs["cues"].tolist(), info["delay"], info["t"], reward, terminated, ended))
            ended_before = terminated
        assert record == vector_record[i]
        assert sum(step[4] for step in record[1:]) >= 10  # many episodes were compared


INVALID_ARGUMENTS = [
    ({"delay_range": (5, 4)}, "delay_range"),
    ({"delay_range": (0, 4)}, "delay_range"),
    ({"delay_range": (5, 2000)}, "delay_range"),
    ({"delay_range": 5}, "delay_range"),
    ({"max_delay": 0}, "max_delay"),
    ({"slack": -1}, "slack"),
    ({"slack": 1.5}, "slack"),
    ({"reward_mode": "sparse"}, "reward_mode"),
    ({"render_mode": "rgb_array"}, "render_mode"),
]
TASK_ARGUMENTS = {
    "ScaledReproduction": [({"gain": 0}, "gain"), ({"gain": 1.5}, "gain"), ({"gain": True}, "gain")],
    "DistractorReproduction": [
        ({"distractor_rate": -0.1}, "distractor_rate"),
        ({"distractor_rate": 1.5}, "distractor_rate"),
        ({"distractor_rate": "often"}, "distractor_rate"),
    ],
    "ContinuationTapping": [({"taps": 0}, "taps"), ({"taps": "two"}, "taps")],
}


@pytest.mark.parametrize("task", TASKS)
def test_each_invalid_argument_raises_value_error_naming_it(task):
    single_class, vector_class = TASKS[task]
    for kwargs, name in INVALID_ARGUMENTS + TASK_ARGUMENTS.get(task, []):
        for make in (single_class, lambda **options: vector_class(2, **options)):
            with pytest.raises(ValueError, match=name) as error:
                make(**kwargs)
            assert repr(next(iter(kwargs.values()))) in str(error.value)
    for num_envs in (0, 1.5):
        with pytest.raises(ValueError, match="num_envs"):
            vector_class(num_envs)
    for other_task, arguments in TASK_ARGUMENTS.items():
        if other_task != task:  # a task refuses the others' own arguments
            with pytest.raises(TypeError, match=arguments[0][1]):
                single_class(**{arguments[0][1]: 2})


@pytest.mark.parametrize("task", TASKS)
def test_reset_delay_outside_one_to_max_delay_raises_value_error(task):
    single_class, vector_class = TASKS[task]
    for delay in (0, -1, 1001, 2.0):
        with pytest.raises(ValueError, match=r"delay.*" + repr(delay)):
            single_class().reset(seed=0, options={"delay": delay})
        with pytest.raises(ValueError, match="delay"):
            vector_class(2).reset(seed=0, options={"delay": delay})
    assert single_class().reset(seed=0, options={"delay": 1000})[1]["delay"] == 1000
    assert vector_class(2).reset(seed=0, options={"delay": 1})[1]["delay"].tolist() == [1, 1]


@pytest.mark.parametrize("task", TASKS)
def test_action_outside_the_space_raises_value_error(task):
    single_class, vector_class = TASKS[task]
    env = single_class()
    env.reset(seed=0)
    for action in (-1, env.action_space.n, 1.0, "press", None):
        with pytest.raises(ValueError, match="action"):
            env.step(action)
    vector = vector_class(3)
    vector.reset(seed=0)
    for actions in ([0, 1, env.action_space.n], [-1, 0, 0], np.array([0.0, 1.0, 0.0]), [0, 1]):
        with pytest.raises(ValueError, match="actions"):
            vector.step(np.asarray(actions))


@pytest.mark.parametrize("task", TASKS)
def test_stepping_an_ended_episode_asks_for_reset(task):
    env = TASKS[task][0]()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    assert env.step(1)[2]  # a press at t = 0 is early: the episode ends
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        TASKS[task][1](2).step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("task", TASKS)
def test_a_policy_that_knows_t_succeeds_in_every_episode_at_every_delay(task):
    env = TASKS[task][0]()
    for delay in CEILING_DELAYS:
        num_envs = 16 if delay <= 100 else 2
        successes, episodes = play_vector(
            task, lambda obs, info, first: scripted_actions(task, obs, info, first), delay, num_envs
        )
        assert successes == episodes, (task, delay)
        assert env.success_ceiling(delay) == 1.0


@pytest.mark.parametrize("task", TASKS)
def test_a_policy_that_presses_at_a_fixed_time_succeeds_at_one_delay_at_most(task):
    perfect_delays = []
    for press_time in (6, 12):

        def press_once(obs, info, first, press_time=press_time):
            return (info["t"] == press_time).astype(np.int64)

        for delay in range(1, 13):
            successes, episodes = play_vector(task, press_once, delay, 16)
            perfect_delays += [delay] if successes == episodes else []
    expected = {
        "ReadySetGo": [3, 6],
        "ScaledReproduction": [2, 4],
        "IntervalDiscrimination": [],  # a fixed answer is right in half of the episodes
        "DistractorReproduction": [3, 6],
        "ContinuationTapping": [],  # one press cannot make two taps
    }
    assert perfect_delays == expected[task]
