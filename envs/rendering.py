"""Frames for people: a large picture of one episode with the delay T, the time t and the stimulus above it.

pygame is imported here only, when a frame is first rendered. In `rgb_array` mode only `pygame.font`
is initialised (no display, no window); `human` mode also initialises the display.
"""

from __future__ import annotations

import math
import os

import numpy as np
from gymnasium.logger import warn as gym_logger_warn

from nalu_rl.envs.drawing import PixelPainter
from nalu_rl.envs.rules import EpisodeBatch

FRAME_GRID_PX = 280  # the grid part of a frame is about this wide, so a frame is never below 256 x 256
HEADER_PX = 72
CAPTION_PX = 40
TEXT_RGB = (235, 235, 235)
HEADER_RGB = (20, 20, 28)
OUTCOME_RGB = {"success": (80, 220, 100), "early": (240, 180, 60), "late": (240, 180, 60)}
DEFAULT_OUTCOME_RGB = (240, 80, 80)


def _pygame():
    """Import pygame quietly (no banner on stdout)."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    return pygame


class FrameRenderer:
    """RGB frames (H, W, 3) uint8 of one episode: the grid, T, t, the stimulus, and the outcome at the end."""

    def __init__(self, size: int) -> None:
        cell_px = max(4, math.ceil(FRAME_GRID_PX / (size + 2)))
        self.painter = PixelPainter(size, cell_px, grid_lines=True)
        grid_side = self.painter.shape[0]
        self.shape = (HEADER_PX + grid_side, grid_side, 3)
        self._font = None

    def _text(self, text: str, rgb: tuple[int, int, int]) -> np.ndarray:
        """`text` drawn on the header colour, as an (h, w, 3) uint8 array."""
        pygame = _pygame()
        if self._font is None:
            pygame.font.init()
            self._font = pygame.font.Font(None, 34)
        surface = self._font.render(text, True, rgb, HEADER_RGB)
        return pygame.surfarray.array3d(surface).transpose(1, 0, 2)

    def frame(
        self, agent: int, target: int, delay: int, t: int, stimulus_label: str, outcome: str = ""
    ) -> np.ndarray:
        """The frame of one episode state: `stimulus_label` (e.g. "light on") while it runs, then `outcome`.

        `outcome` is "" while the episode runs.
        """
        frame = np.empty(self.shape, dtype=np.uint8)
        frame[:HEADER_PX] = HEADER_RGB
        frame[HEADER_PX:] = self.painter.paint(np.array([agent]), np.array([target]))[0]
        self._paste(frame, self._text(f"T = {delay}", TEXT_RGB), top=8, left=12)
        self._paste(frame, self._text(f"t = {t}", TEXT_RGB), top=8, right=12)
        if outcome:
            status, rgb = outcome, OUTCOME_RGB.get(outcome, DEFAULT_OUTCOME_RGB)
        else:
            status, rgb = stimulus_label, TEXT_RGB
        self._paste(frame, self._text(status, rgb), top=40, left=12)
        return frame

    @staticmethod
    def _paste(
        frame: np.ndarray, patch: np.ndarray, top: int, left: int | None = None, right: int = 0
    ) -> None:
        height, width = patch.shape[:2]
        width = min(width, frame.shape[1])
        column = frame.shape[1] - right - width if left is None else left
        frame[top : top + height, column : column + width] = patch[:, :width]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_font"] = None  # pygame objects do not pickle; the font is reloaded on demand
        return state


def add_caption(frame: np.ndarray, text: str, rgb: tuple[int, int, int] = TEXT_RGB) -> np.ndarray:
    """A copy of `frame` (H, W, 3) uint8 with a strip below it holding one line of `text`."""
    pygame = _pygame()
    pygame.font.init()
    font = pygame.font.Font(None, 26)
    patch = pygame.surfarray.array3d(font.render(text, True, rgb, HEADER_RGB)).transpose(1, 0, 2)
    strip = np.empty((CAPTION_PX, frame.shape[1], 3), dtype=np.uint8)
    strip[:] = HEADER_RGB
    FrameRenderer._paste(strip, patch[: CAPTION_PX - 8, : frame.shape[1] - 24], top=8, left=12)
    return np.concatenate([frame, strip])


class HumanWindow:
    """A pygame window that shows frames, each for one frame period."""

    def __init__(self, title: str = "TimeTrack") -> None:
        self.title = title
        self._screen = None
        self._clock = None

    def show(self, frame: np.ndarray, fps: float) -> None:
        """Display `frame` (H, W, 3) uint8 and wait for the frame period at `fps` frames per second."""
        pygame = _pygame()
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode((frame.shape[1], frame.shape[0]))
            self._clock = pygame.time.Clock()
        pygame.event.pump()
        pygame.surfarray.blit_array(self._screen, frame.transpose(1, 0, 2))
        pygame.display.flip()
        self._clock.tick(fps)

    def close(self) -> None:
        """Close the window, if one is open."""
        if self._screen is not None:
            _pygame().display.quit()
            self._screen = None
            self._clock = None

    def __getstate__(self) -> dict:
        return {"title": self.title, "_screen": None, "_clock": None}


class EpisodeRenderer:
    """What `render()` does for both envs: a frame of one env of an EpisodeBatch, returned or shown."""

    def __init__(self, render_mode: str | None, size: int, window_title: str = "TimeTrack") -> None:
        self.render_mode = render_mode
        self.size = size
        self.window_title = window_title
        self._frames: FrameRenderer | None = None
        self._window: HumanWindow | None = None

    def render(self, batch: EpisodeBatch, env: int, outcome: str, fps: float) -> np.ndarray | None:
        """The frame of env `env` of `batch` (rgb_array), or show it in the window at `fps` (human)."""
        if self.render_mode is None:
            gym_logger_warn("render() was called with render_mode=None; use 'rgb_array' or 'human'.")
            return None
        if self._frames is None:
            self._frames = FrameRenderer(self.size)
        frame = self._frames.frame(
            int(batch.agent[env]),
            int(batch.target[env]),
            int(batch.delay[env]),
            int(batch.t[env]),
            batch.rule.stimulus_label(float(batch.stimulus()[env, 0])),
            outcome,
        )
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = HumanWindow(self.window_title)
        self._window.show(frame, fps)
        return None

    def close(self) -> None:
        """Close the window, if one is open; safe to call more than once."""
        if self._window is not None:
            self._window.close()
            self._window = None
