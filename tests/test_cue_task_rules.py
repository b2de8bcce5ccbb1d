"""The rules of each cue task: cue times, due times, early/late/timeout/wrong, rewards, distractors, taps.

Time convention of every cue task: a cue at time s is in observation s (after s actions); a press at
time p is the action chosen on observation p, so `info["t"]` on that step is p + 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from nalu_rl.envs import (
    ContinuationTappingEnv,
    DistractorReproductionEnv,
    DistractorReproductionVectorEnv,
    IntervalDiscriminationEnv,
    ReadySetGoEnv,
    ScaledReproductionEnv,
)
from nalu_rl.envs.draws import step_uniforms
from nalu_rl.envs.interval_discrimination import FIRST_LONGER, SECOND_LONGER

WAIT, PRESS = 0, 1


def cue_times(env, delay: int, steps: int, seed: int = 0) -> list[list[int]]:
    """For each cue channel, the observation indices at which it is on, waiting `steps` steps."""
    obs, _ = env.reset(seed=seed, options={"delay": delay})
    frames = [obs["cues"]]
    for _ in range(steps):
        obs, _, terminated, _, _ = env.step(WAIT)
        frames.append(obs["cues"])
        if terminated:
            break
    cues = np.array(frames)
    assert set(np.unique(cues)) <= {0.0, 1.0}
    return [np.flatnonzero(cues[:, channel]).tolist() for channel in range(cues.shape[1])]


def press_at(env, delay: int, press_time: int, action: int = PRESS, seed: int = 0) -> tuple:
    """Wait until observation `press_time`, then press there; the step's (reward, terminated, info)."""
    env.reset(seed=seed, options={"delay": delay})
    for t in range(press_time):
        _, _, terminated, _, _ = env.step(WAIT)
        assert not terminated, f"ended at t={t + 1} before the press"
    _, reward, terminated, truncated, info = env.step(action)
    assert not truncated
    return reward, terminated, info


@pytest.mark.parametrize("delay", [1, 2, 7])
def test_ready_set_go_flashes_ready_at_zero_and_set_at_t(delay):
    assert cue_times(ReadySetGoEnv(), delay, 4 * delay) == [[0], [delay]]


@pytest.mark.parametrize("delay", [1, 5])
def test_ready_set_go_press_on_observation_two_t_is_success(delay):
    env = ReadySetGoEnv()
    reward, terminated, info = press_at(env, delay, 2 * delay)
    assert (reward, terminated, info["outcome"], info["success"]) == (1.0, True, "success", True)
    assert info["t"] == 2 * delay + 1 and env.due_time(delay) == 2 * delay


@pytest.mark.parametrize(
    ("press_time", "outcome", "reward"), [(9, "early", 0.5), (11, "late", 0.5), (3, "early", -1.0)]
)
def test_ready_set_go_off_time_press_is_graded_like_time_track(press_time, outcome, reward):
    result, terminated, info = press_at(ReadySetGoEnv(), 5, press_time)
    assert (result, terminated, info["outcome"], info["success"]) == (reward, True, outcome, False)


def test_ready_set_go_press_before_set_is_early_and_exact_mode_pays_minus_one():
    assert press_at(ReadySetGoEnv(), 6, 2)[2]["outcome"] == "early"  # set comes at 6
    exact = ReadySetGoEnv(reward_mode="exact")
    assert [press_at(exact, 5, p)[0] for p in (9, 10, 11)] == [-1.0, 1.0, -1.0]


@pytest.mark.parametrize(("delay", "slack"), [(3, 8), (4, 0), (2, 3)])
def test_no_press_by_due_plus_slack_times_out(delay, slack):
    env = ReadySetGoEnv(slack=slack)
    env.reset(seed=0, options={"delay": delay})
    results = [env.step(WAIT) for _ in range(2 * delay + slack + 1)]
    _, reward, terminated, truncated, info = results[-1]
    assert (reward, terminated, truncated, info["outcome"], info["success"]) == (
        -1.0,
        True,
        False,
        "timeout",
        False,
    )
    assert info["t"] == 2 * delay + slack + 1 and not any(r[2] for r in results[:-1])
    assert press_at(ReadySetGoEnv(slack=slack), delay, 2 * delay + slack)[2]["outcome"] == (
        "late" if slack else "success"
    )


@pytest.mark.parametrize("gain", [1, 2, 3])
def test_scaled_reproduction_press_is_due_gain_times_t_after_set(gain):
    env = ScaledReproductionEnv(gain=gain)
    delay = 4
    assert cue_times(env, delay, delay + 1) == [[0], [delay]]
    assert env.due_time(delay) == (1 + gain) * delay
    assert press_at(env, delay, (1 + gain) * delay)[2]["outcome"] == "success"
    assert press_at(env, delay, 2 * delay)[2]["outcome"] == ("success" if gain == 1 else "early")
    assert ScaledReproductionEnv().config.gain == 2


def first_longer_episode(env, delay: int, first_longer: bool) -> int:
    """A seed whose episode at `delay` has its longer interval first (or second)."""
    for seed in range(100):
        times = cue_times(env, delay, 2 * delay + 3, seed=seed)[0]
        if (times[1] > times[2] - times[1]) == first_longer:
            return seed
    raise AssertionError("no such seed")


@pytest.mark.parametrize("delay", [1, 3, 4, 9, 40])
def test_discrimination_flashes_at_zero_a_and_a_plus_b_with_a_weber_fraction_of_a_quarter(delay):
    env = IntervalDiscriminationEnv()
    difference = max(1, delay // 4)
    orders = set()
    for seed in range(12):
        times = cue_times(env, delay, 3 * delay + 2, seed=seed)[0]
        first, second = times[1], times[2] - times[1]
        assert times[0] == 0 and times[2] == env.due_time(delay) == 2 * delay + difference
        assert sorted([first, second]) == [delay, delay + difference]
        orders.add(first > second)
    assert orders == {True, False}  # both orders occur


@pytest.mark.parametrize("first_longer", [True, False])
def test_discrimination_right_answer_succeeds_and_the_other_is_wrong(first_longer):
    env = IntervalDiscriminationEnv(slack=3)
    delay = 8
    seed = first_longer_episode(env, delay, first_longer)
    right, wrong = (FIRST_LONGER, SECOND_LONGER) if first_longer else (SECOND_LONGER, FIRST_LONGER)
    due = env.due_time(delay)
    for answer_time in (due, due + 3):  # any step of the answer window
        reward, terminated, info = press_at(env, delay, answer_time, right, seed=seed)
        assert (reward, terminated, info["outcome"], info["success"]) == (1.0, True, "success", True)
    reward, terminated, info = press_at(env, delay, due, wrong, seed=seed)
    assert (reward, terminated, info["outcome"], info["success"]) == (-1.0, True, "wrong", False)
    reward, _, info = press_at(env, delay, due - 1, right, seed=seed)  # before the third flash
    assert (reward, info["outcome"]) == (-1.0, "early")
    env.reset(seed=seed, options={"delay": delay})
    results = [env.step(WAIT) for _ in range(due + 4)]
    assert results[-1][4]["outcome"] == "timeout" and results[-1][1] == -1.0
    assert not any(r[2] for r in results[:-1])


def test_distractors_are_never_at_the_cue_times_and_come_at_their_rate():
    num_envs, steps = 256, 60
    vector = DistractorReproductionVectorEnv(num_envs, delay_range=(1, 30), slack=100)  # no episode ends
    obs, info = vector.reset(seed=3)
    frames = [obs["cues"]]
    for _ in range(steps):
        obs, _, terminated, _, _ = vector.step(np.zeros(num_envs, dtype=np.int64))
        frames.append(obs["cues"])
        assert not terminated.any()
    cues = np.array(frames)  # (steps + 1, num_envs, 2)
    flash, kind = cues[..., 0], cues[..., 1]
    t = np.arange(steps + 1)[:, None]
    timing_cue = (t == 0) | (t == info["delay"][None, :])
    assert np.array_equal(flash * (1 - kind), timing_cue)  # kind 0 only at 0 and T
    assert not np.any(kind[timing_cue]) and np.all(flash[kind == 1] == 1)
    rate = kind.sum() / (~timing_cue).sum()
    assert abs(rate - 0.1) < 0.01, rate


def test_distractor_rate_zero_shows_none_and_one_shows_one_at_every_other_step():
    quiet = cue_times(DistractorReproductionEnv(distractor_rate=0.0), 4, 30)
    assert quiet == [[0, 4], []]
    busy = cue_times(DistractorReproductionEnv(distractor_rate=1.0, slack=2), 4, 30)
    assert busy[0] == list(range(12)) and busy[1] == [t for t in range(12) if t not in (0, 4)]


def test_distractors_are_identical_in_single_and_vector_envs_and_differ_across_episodes():
    vector = DistractorReproductionVectorEnv(4, delay_range=(20, 20), distractor_rate=0.3)
    obs, _ = vector.reset(seed=7)
    vector_frames = [obs["cues"]]
    for _ in range(30):
        obs, *_ = vector.step(np.zeros(4, dtype=np.int64))
        vector_frames.append(obs["cues"])
    vector_kinds = np.array(vector_frames)[:, :, 1]
    for i in range(4):
        single = DistractorReproductionEnv(delay_range=(20, 20), distractor_rate=0.3)
        assert cue_times(single, 20, 30, seed=7 + i)[1] == np.flatnonzero(vector_kinds[:, i]).tolist()
    assert len({tuple(vector_kinds[:, i]) for i in range(4)}) == 4


def test_a_distractor_does_not_move_the_due_time():
    env = DistractorReproductionEnv(distractor_rate=0.5)
    for seed in range(5):
        assert press_at(env, 6, 12, seed=seed)[2]["outcome"] == "success"
        assert press_at(env, 6, 11, seed=seed)[2]["outcome"] == "early"


def test_step_uniforms_are_a_fixed_function_of_key_and_t():
    key = np.array([1, 1, 2], dtype=np.uint64)
    t = np.array([5, 6, 5])
    first = step_uniforms(key, t)
    assert np.array_equal(first, step_uniforms(key, t)) and len(set(first.tolist())) == 3
    assert np.all((first >= 0) & (first < 1))


@pytest.mark.parametrize("delay", [1, 3, 6])
def test_continuation_tapping_beats_at_zero_t_and_two_t_then_nothing(delay):
    env = ContinuationTappingEnv()
    assert cue_times(env, delay, 6 * delay) == [[0, delay, 2 * delay]]
    assert env.due_time(delay) == 4 * delay and ContinuationTappingEnv(taps=3).due_time(delay) == 5 * delay


def test_continuation_taps_on_the_beat_pay_a_share_each_and_the_last_succeeds():
    env = ContinuationTappingEnv(taps=3)
    delay = 4
    env.reset(seed=0, options={"delay": delay})
    rewards = []
    for t in range(6 * delay + 1):
        _, reward, terminated, _, info = env.step(PRESS if t in (12, 16, 20) else WAIT)
        rewards.append(reward)
        if terminated:
            break
    assert info["t"] == 21 and info["outcome"] == "success" and info["success"]
    assert [r for r in rewards if r] == pytest.approx([1 / 3] * 3) and sum(rewards) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("second_tap", "outcome", "reward"), [(15, "early", 0.25), (17, "late", 0.25), (20, "late", -0.5)]
)
def test_continuation_tap_off_time_ends_the_episode(second_tap, outcome, reward):
    env = ContinuationTappingEnv(slack=8)
    delay = 4
    env.reset(seed=0, options={"delay": delay})
    for t in range(second_tap + 1):
        _, step_reward, terminated, _, info = env.step(PRESS if t in (12, second_tap) else WAIT)
        assert terminated == (t == second_tap)
    assert (info["outcome"], info["success"], step_reward) == (outcome, False, reward)
    exact = ContinuationTappingEnv(reward_mode="exact")
    assert press_at(exact, delay, 11)[0] == -0.5  # the first tap one step early: -1 / taps


def test_continuation_timeout_counts_from_the_tap_then_due():
    env = ContinuationTappingEnv(slack=2)
    delay = 5
    env.reset(seed=0, options={"delay": delay})
    for t in range(30):
        _, reward, terminated, _, info = env.step(PRESS if t == 15 else WAIT)
        if terminated:
            break
    assert (info["t"], info["outcome"], reward) == (20 + 2 + 1, "timeout", -1.0)
