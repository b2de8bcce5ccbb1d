"""The rules of TimeTrack: arrival timing, rewards, timeout, walls, stimulus, observations."""

from itertools import permutations

import numpy as np
import pytest
from conftest import DOWN, LEFT, PASS, RIGHT, UP, arrive_at, play

from nalu_rl.envs import OUTCOMES, TimeTrackEnv, success_ceiling
from nalu_rl.envs.drawing import AGENT_RGB, FLOOR_RGB, TARGET_RGB, WALL_RGB


def positions(obs: dict) -> tuple[tuple[int, int], tuple[int, int]]:
    """(row, col) of the agent and of the target in a symbolic observation."""
    agent = np.argwhere(obs["grid"][0] == 1)
    target = np.argwhere(obs["grid"][1] == 1)
    assert len(agent) == 1 and len(target) == 1
    return tuple(agent[0]), tuple(target[0])


def test_arrival_exactly_at_delay_is_success_with_reward_one():
    env = TimeTrackEnv(obs_mode="symbolic")
    _, reward, terminated, truncated, info = arrive_at(env, delay=10, arrival_time=10)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["outcome"] == "success" and info["t"] == 10 and info["delay"] == 10 and info["distance"] == 0


@pytest.mark.parametrize(("arrival_time", "outcome"), [(9, "early"), (11, "late")])
def test_one_step_off_gives_half_reward_and_the_right_outcome(arrival_time, outcome):
    env = TimeTrackEnv(obs_mode="symbolic")
    _, reward, terminated, _, info = arrive_at(env, delay=10, arrival_time=arrival_time)
    assert reward == 0.5 and terminated and info["outcome"] == outcome


@pytest.mark.parametrize(("arrival_time", "expected"), [(8, 0.0), (13, -0.5), (14, -1.0), (16, -1.0)])
def test_graded_reward_falls_by_half_per_step_off_down_to_minus_one(arrival_time, expected):
    env = TimeTrackEnv(obs_mode="symbolic", delay_range=(1, 30))
    _, reward, _, _, _ = arrive_at(env, delay=10, arrival_time=arrival_time)
    assert reward == expected


@pytest.mark.parametrize(("arrival_time", "expected"), [(10, 1.0), (9, -1.0), (11, -1.0)])
def test_exact_reward_mode_pays_only_for_arrival_on_time(arrival_time, expected):
    env = TimeTrackEnv(obs_mode="symbolic", reward_mode="exact")
    _, reward, _, _, _ = arrive_at(env, delay=10, arrival_time=arrival_time)
    assert reward == expected


@pytest.mark.parametrize(("slack", "reward_mode"), [(None, "graded"), (3, "graded"), (0, "exact")])
def test_no_arrival_by_delay_plus_slack_is_timeout_with_minus_one(slack, reward_mode):
    env = TimeTrackEnv(obs_mode="symbolic", slack=slack, reward_mode=reward_mode)
    env.reset(seed=0, options={"delay": 6})
    results = play(env, [PASS] * 100)
    expected_slack = 8 if slack is None else slack  # 2 * (size - 1) by default
    assert len(results) == 6 + expected_slack
    assert all(r[1] == 0.0 and not r[2] for r in results[:-1])
    _, reward, terminated, truncated, info = results[-1]
    assert (reward, terminated, truncated, info["outcome"]) == (-1.0, True, False, "timeout")


def test_walls_block_moves_and_pass_stays():
    env = TimeTrackEnv(obs_mode="symbolic", size=3, delay_range=(20, 20))
    obs, _ = env.reset(seed=0)
    checked = 0
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        (row, col), target = positions(obs)
        for action, at_wall in ((UP, row == 0), (DOWN, row == 2), (LEFT, col == 0), (RIGHT, col == 2)):
            if at_wall:
                obs, reward, terminated, _, _ = env.step(action)
                assert positions(obs)[0] == (row, col) and not terminated
                checked += 1
        obs, _, _, _, _ = env.step(PASS)
        assert positions(obs)[0] == (row, col)
    assert checked > 20


def test_moves_go_one_cell_in_their_direction():
    env = TimeTrackEnv(obs_mode="symbolic", size=5, delay_range=(20, 20))
    moves = {UP: (-1, 0), DOWN: (1, 0), LEFT: (0, -1), RIGHT: (0, 1)}
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        for action, (d_row, d_col) in moves.items():
            (row, col), target = positions(obs)
            expected = (min(max(row + d_row, 0), 4), min(max(col + d_col, 0), 4))
            if expected == target:
                break
            obs, _, _, _, _ = env.step(action)
            assert positions(obs)[0] == expected


def test_stimulus_is_delay_at_onset_and_zero_after():
    env = TimeTrackEnv(obs_mode="symbolic")
    obs, info = env.reset(seed=1, options={"delay": 7})
    assert obs["stimulus"].dtype == np.float32 and obs["stimulus"].tolist() == [7.0]
    for obs, *_ in play(env, [PASS] * 5):
        assert obs["stimulus"].tolist() == [0.0]


def test_stimulus_always_mode_shows_delay_every_step():
    env = TimeTrackEnv(obs_mode="symbolic", stimulus="always")
    obs, info = env.reset(seed=1)
    assert obs["stimulus"].tolist() == [float(info["delay"])]
    for obs, *_ in play(env, [PASS] * 5):
        assert obs["stimulus"].tolist() == [float(info["delay"])]


def test_info_holds_delay_time_and_distance():
    env = TimeTrackEnv(obs_mode="symbolic")
    obs, info = env.reset(seed=5)
    (row, col), (target_row, target_col) = positions(obs)
    assert info == {"delay": info["delay"], "t": 0, "distance": abs(row - target_row) + abs(col - target_col)}
    assert 5 <= info["delay"] <= 12
    _, _, _, _, info = env.step(PASS)
    assert info["t"] == 1 and "outcome" not in info


def test_pixels_are_56x56_uint8_with_agent_gray_and_target_red_in_their_cells():
    pixel_env = TimeTrackEnv(obs_mode="pixels")
    symbolic_env = TimeTrackEnv(obs_mode="symbolic")
    for seed in range(5):
        image = pixel_env.reset(seed=seed)[0]["pixels"]
        (row, col), (target_row, target_col) = positions(symbolic_env.reset(seed=seed)[0])
        assert image.shape == (56, 56, 3) and image.dtype == np.uint8
        cells = image.reshape(7, 8, 7, 8, 3).transpose(0, 2, 1, 3, 4)  # [cell row, cell col, y, x, rgb]
        assert (cells[row + 1, col + 1] == AGENT_RGB).all()
        assert (cells[target_row + 1, target_col + 1] == TARGET_RGB).all()
        assert (cells[0] == WALL_RGB).all() and (cells[:, 6] == WALL_RGB).all()
        colours = np.unique(image.reshape(-1, 3), axis=0).tolist()
        assert sorted(colours) == sorted(map(list, (AGENT_RGB, TARGET_RGB, WALL_RGB, FLOOR_RGB)))
        assert AGENT_RGB[0] == AGENT_RGB[1] == AGENT_RGB[2] and TARGET_RGB[0] > 200 > max(TARGET_RGB[1:])


@pytest.mark.parametrize("cell_px", [1, 3, 6, 8, 40])
@pytest.mark.parametrize("size", [2, 5, 7])
def test_pixels_match_a_cell_by_cell_drawing_for_any_cell_size(cell_px, size):
    env = TimeTrackEnv(obs_mode="pixels", size=size, cell_px=cell_px)
    symbolic_env = TimeTrackEnv(obs_mode="symbolic", size=size)
    for seed in range(3):
        image = env.reset(seed=seed)[0]["pixels"]
        agent, target = positions(symbolic_env.reset(seed=seed)[0])
        expected = np.empty(((size + 2) * cell_px, (size + 2) * cell_px, 3), dtype=np.uint8)
        for row in range(size + 2):
            for col in range(size + 2):
                wall = row in (0, size + 1) or col in (0, size + 1)
                colour = WALL_RGB if wall else FLOOR_RGB
                colour = AGENT_RGB if (row - 1, col - 1) == agent else colour
                colour = TARGET_RGB if (row - 1, col - 1) == target else colour
                expected[row * cell_px : (row + 1) * cell_px, col * cell_px : (col + 1) * cell_px] = colour
        assert np.array_equal(image, expected)


def test_agent_and_target_never_share_a_cell_and_delay_covers_its_range():
    env = TimeTrackEnv(obs_mode="symbolic", size=2, delay_range=(3, 5))
    delays, pairs = set(), set()
    env.reset(seed=0)
    for _ in range(300):
        obs, info = env.reset()
        agent, target = positions(obs)
        assert agent != target
        pairs.add((agent, target))
        delays.add(info["delay"])
    assert delays == {3, 4, 5} and len(pairs) == 12  # all ordered pairs of distinct cells of a 2x2 grid


def test_success_ceiling_matches_enumeration_and_the_spec_values():
    spec_values = {1: 0.133, 2: 0.340, 3: 0.567, 4: 0.767, 5: 0.900, 6: 0.967, 7: 0.993, 8: 1.0, 40: 1.0}
    for delay, value in spec_values.items():
        assert round(success_ceiling(delay), 3) == value
    cells = [(r, c) for r in range(3) for c in range(3)]
    pairs = list(permutations(cells, 2))
    for delay in range(6):
        reachable = sum(abs(a[0] - b[0]) + abs(a[1] - b[1]) <= delay for a, b in pairs)
        assert success_ceiling(delay, size=3) == pytest.approx(reachable / len(pairs))


def test_outcomes_are_the_four_documented_names():
    assert OUTCOMES == ("success", "early", "late", "timeout")
