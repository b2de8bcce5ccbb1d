"""Observations of a batch of episodes, drawn with numpy: 56x56 pixels (by default) or the symbolic grid.

Every call returns new arrays (callers keep them), filled from a cached background by block writes.
"""

from __future__ import annotations

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
        self._agent_rgb = np.array(AGENT_RGB, dtype=np.uint8)
        self._target_rgb = np.array(TARGET_RGB, dtype=np.uint8)

    def paint(self, agent: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Frames showing the agent (gray) and target (red) at flat cells `agent`, `target`, one per env."""
        num_envs = len(agent)
        frames = np.empty((num_envs, *self.shape), dtype=np.uint8)
        frames[:] = self.background
        across, px = self.cells_across, self.cell_px
        # A view with one axis per cell row / cell column: a whole cell block is one index.
        blocks = frames.reshape(num_envs, across, px, across, px, 3)
        envs = np.arange(num_envs)
        agent_row, agent_col = np.divmod(agent, self.size)
        target_row, target_col = np.divmod(target, self.size)
        blocks[envs, agent_row + 1, :, agent_col + 1] = self._agent_rgb
        blocks[envs, target_row + 1, :, target_col + 1] = self._target_rgb
        return frames


def paint_grid(size: int, agent: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Symbolic observations, shape (n, 2, size, size) uint8: plane 0 marks the agent, plane 1 the target."""
    num_envs = len(agent)
    grid = np.zeros((num_envs, 2, size * size), dtype=np.uint8)
    envs = np.arange(num_envs)
    grid[envs, 0, agent] = 1
    grid[envs, 1, target] = 1
    return grid.reshape(num_envs, 2, size, size)
