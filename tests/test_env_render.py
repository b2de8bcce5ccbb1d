"""Rendering, headless: rgb_array frames show the grid, T and t; human mode opens a window."""

import os

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from nalu_rl.envs import TimeTrackEnv, TimeTrackVectorEnv  # noqa: E402
from nalu_rl.envs.drawing import AGENT_RGB, TARGET_RGB  # noqa: E402
from nalu_rl.envs.rendering import HEADER_PX  # noqa: E402


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


def grid_cell(frame: np.ndarray, size: int, row: int, col: int) -> np.ndarray:
    """The pixels of floor cell (row, col) in the grid part of a rendered frame, inset by 2 pixels."""
    grid = frame[HEADER_PX:]
    cell = grid.shape[0] // (size + 2)
    top, left = (row + 1) * cell, (col + 1) * cell
    return grid[top + 2 : top + cell - 2, left + 2 : left + cell - 2]


def test_rgb_array_frame_is_large_and_shows_agent_and_target_without_a_display():
    pygame.display.quit()
    env = TimeTrackEnv(obs_mode="symbolic", render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.shape[0] >= 256 and frame.shape[1] >= 256
    (row, col), (target_row, target_col) = (tuple(np.argwhere(obs["grid"][k])[0]) for k in (0, 1))
    assert (grid_cell(frame, 5, row, col) == AGENT_RGB).all()
    assert (grid_cell(frame, 5, target_row, target_col) == TARGET_RGB).all()
    assert not pygame.display.get_init()  # rgb_array mode draws text with pygame.font only
    env.close()


def test_frame_header_changes_with_t_and_with_delay():
    env = TimeTrackEnv(obs_mode="symbolic", render_mode="rgb_array")
    env.reset(seed=0, options={"delay": 7})
    at_start = env.render()
    env.step(4)  # PASS: only t (and the stimulus line) change
    after_one_step = env.render()
    assert np.array_equal(at_start[HEADER_PX:], after_one_step[HEADER_PX:])
    assert not np.array_equal(at_start[:HEADER_PX], after_one_step[:HEADER_PX])
    env.reset(seed=0, options={"delay": 12})
    other_delay = env.render()
    assert not np.array_equal(at_start[:HEADER_PX], other_delay[:HEADER_PX])
    # Text is drawn: the header holds more than its background colour.
    assert len(np.unique(at_start[:HEADER_PX].reshape(-1, 3), axis=0)) > 2


def test_frame_shows_the_outcome_after_the_episode_ends():
    env = TimeTrackEnv(obs_mode="symbolic", render_mode="rgb_array", delay_range=(1, 1), slack=0)
    env.reset(seed=0)
    running = env.render()
    assert env.step(4)[4]["outcome"] == "timeout"
    ended = env.render()
    assert not np.array_equal(running[:HEADER_PX], ended[:HEADER_PX])


def test_human_mode_opens_a_window_and_close_shuts_it():
    env = TimeTrackEnv(render_mode="human")
    env.metadata = {**env.metadata, "render_fps": 1000}  # do not slow the test down
    env.reset(seed=0)
    for action in (0, 1, 4):
        assert env.step(action)[2] in (True, False)
    assert pygame.display.get_init()
    surface = pygame.display.get_surface()
    assert surface is not None and surface.get_width() >= 256 and surface.get_height() >= 256
    env.close()
    assert not pygame.display.get_init()
    env.close()  # closing twice is allowed


def test_vector_env_renders_env_zero():
    vector = TimeTrackVectorEnv(3, obs_mode="symbolic", render_mode="rgb_array")
    obs, _ = vector.reset(seed=5)
    single = TimeTrackEnv(obs_mode="symbolic", render_mode="rgb_array")
    single.reset(seed=5)
    assert np.array_equal(vector.render(), single.render())
    vector.close()


def test_render_without_render_mode_returns_none():
    env = TimeTrackEnv()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
