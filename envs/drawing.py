"""Observations of a batch of episodes, drawn with numpy: 56x56 pixels (by default) or the symbolic grid.

Every call returns new arrays (callers keep them), filled from a cached background by block writes.
`PixelPainter.byte_layout` and the two index writes `paint_cell_blocks` and `mark_cells` draw the
same observations into arrays of any namespace that supports advanced-index assignment (torch
tensors on a device: `nalu_rl.runtime.device_env`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

WALL_RGB = (64, 64, 64)
FLOOR_RGB = (0, 0, 0)
AGENT_RGB = (160, 160, 160)
TARGET_RGB = (255, 0, 0)
GRID_LINE_RGB = (36, 36, 36)


class PixelPainter:
    """Draws the world, walls included, with `cell_px` pixels per cell: frames of shape (n, H, W, 3) uint8."""

    def __init__(self, size: int, cell_px: int, grid_lines: bool = False) -> None:
        self.size = size
        self.cell_px = cell_px
        self.cells_across = size + 2  # the wall is one cell thick on each side
        side = self.cells_across * cell_px
        self.shape = (side, side, 3)
        background = np.empty(self.shape, dtype=np.uint8)
        background[:] = WALL_RGB
        background[cell_px:-cell_px, cell_px:-cell_px] = FLOOR_RGB
        if grid_lines:
            for k in range(1, size):
                line = (k + 1) * cell_px
                background[line, cell_px:-cell_px] = GRID_LINE_RGB
                background[cell_px:-cell_px, line] = GRID_LINE_RGB
        self.background = background
        # Cells are written as machine words, not bytes: one row of a cell (cell_px * 3 bytes) is a
        # few words, so a cell block is a short list of word offsets (fancy indexing per byte is slow).
        word_bytes = math.gcd(cell_px * 3, 8)
        self._word = np.dtype(f"u{word_bytes}")
        row_words = side * 3 // word_bytes
        cell_row_words = cell_px * 3 // word_bytes
        self._frame_words = side * row_words
        rows, cols = np.divmod(np.arange(size * size), size)
        block_rows = (rows[:, None] + 1) * cell_px + np.arange(cell_px)[None, :]  # (cells, cell_px)
        first_words = (cols[:, None, None] + 1) * cell_row_words + np.arange(cell_row_words)
        self._cell_words = (block_rows[:, :, None] * row_words + first_words).reshape(size * size, -1)
        self._agent_words = self._block_words(AGENT_RGB)
        self._target_words = self._block_words(TARGET_RGB)
        self._frame_starts = np.zeros(
            (0, 1), dtype=np.int64
        )  # word offset of each frame, cached per batch size

    def byte_layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The frame as bytes: (background (H * W * 3,) uint8, cell_offsets (cells, cell_px * cell_px * 3)
        int64, the byte offsets of each cell's block in a flat frame, the agent's block bytes, the
        target's block bytes), for `paint_cell_blocks`."""
        size, cell_px = self.size, self.cell_px
        side = self.shape[1]
        rows, cols = np.divmod(np.arange(size * size), size)
        block_rows = (rows[:, None] + 1) * cell_px + np.arange(cell_px)[None, :]  # (cells, cell_px)
        first_bytes = (cols[:, None, None] + 1) * cell_px * 3 + np.arange(cell_px * 3)  # (cells, 1, px*3)
        offsets = (block_rows[:, :, None] * side * 3 + first_bytes).reshape(size * size, -1)
        agent_block = np.tile(np.array(AGENT_RGB, dtype=np.uint8), cell_px * cell_px)
        target_block = np.tile(np.array(TARGET_RGB, dtype=np.uint8), cell_px * cell_px)
        return self.background.reshape(-1), offsets, agent_block, target_block

    def _block_words(self, rgb: tuple[int, int, int]) -> np.ndarray:
        """One cell block of colour `rgb` as words, in the order of `_cell_words`."""
        block_row = np.tile(np.array(rgb, dtype=np.uint8), self.cell_px).view(self._word)
        return np.tile(block_row, self.cell_px)

    def paint(self, agent: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Frames showing the agent (gray) and target (red) at flat cells `agent`, `target`, one per env."""
        num_envs = len(agent)
        frames = np.empty((num_envs, *self.shape), dtype=np.uint8)
        frames[:] = self.background
        words = frames.reshape(-1).view(self._word)
        if len(self._frame_starts) != num_envs:
            self._frame_starts = (np.arange(num_envs) * self._frame_words)[:, None]
        frame_starts = self._frame_starts
        words[frame_starts + self._cell_words[agent]] = self._agent_words
        words[frame_starts + self._cell_words[target]] = self._target_words
        return frames


def paint_grid(size: int, agent: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Symbolic observations, shape (n, 2, size, size) uint8: plane 0 marks the agent, plane 1 the target."""
    num_envs = len(agent)
    grid = np.zeros((num_envs, 2, size * size), dtype=np.uint8)
    mark_cells(grid, np.arange(num_envs), agent, target)
    return grid.reshape(num_envs, 2, size, size)


def paint_cell_blocks(
    frames: Any, envs: Any, cell_offsets: Any, agent: Any, target: Any, agent_block: Any, target_block: Any
) -> None:
    """Write the agent's and the target's cell blocks into flat frames (n, H * W * 3) that hold the
    background, with the arrays of `PixelPainter.byte_layout` (numpy, or converted to another
    namespace); `envs` is 0..n-1. The target is written last, as `PixelPainter.paint` does."""
    frames[envs[:, None], cell_offsets[agent]] = agent_block
    frames[envs[:, None], cell_offsets[target]] = target_block


def mark_cells(grid: Any, envs: Any, agent: Any, target: Any) -> None:
    """Mark the agent (plane 0) and the target (plane 1) in zeroed symbolic observations of shape
    (n, 2, size * size), of any namespace; `envs` is 0..n-1 (what `paint_grid` draws)."""
    grid[envs, 0, agent] = 1
    grid[envs, 1, target] = 1
