"""Episodes of a trained agent as frames: in a pygame window, or as RGB frames written to a GIF or MP4
(what `python -m nalu_rl.render` and the end of a training run show). Each frame shows the grid, T
and t, and the outcome once an episode ends.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.evaluation import ModelPolicy, evaluation_env_kwargs, training_range

RECORD_FORMATS = (".gif", ".mp4")
# How long the last frame of an episode stays on screen, in seconds, so its outcome can be read.
HOLD_LAST_FRAME_S = 1.0


def play_episodes_to_frames(
    model: torch.nn.Module,
    config: dict[str, Any],
    episodes: int = 3,
    delay: int | None = None,
    seed: int = 0,
    greedy: bool = False,
    fps: float = 4.0,
    window: bool = False,
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Play `episodes` episodes of `model` in a single TimeTrack env and render each step.

    With `window` the frames go to a pygame window at `fps` and no frames are returned;
    otherwise the RGB frames (H, W, 3) uint8 are returned, the last frame of each episode
    repeated to last HOLD_LAST_FRAME_S. Also returns one dict per episode: delay, t, outcome.
    `delay` fixes T; by default T is drawn from the checkpoint's training range.
    """
    from envs import TimeTrackEnv

    env_kwargs = evaluation_env_kwargs(config)
    delay_range = (delay, delay) if delay is not None else training_range(config)
    env = TimeTrackEnv(**env_kwargs, delay_range=delay_range, render_mode="human" if window else "rgb_array")
    # The window paces itself by the env's render_fps; an instance copy leaves the class default alone.
    env.metadata = {**env.metadata, "render_fps": fps}
    hold_frames = max(1, round(HOLD_LAST_FRAME_S * fps))
    policy = ModelPolicy(model, 1, greedy=greedy, group_seeds=[seed])
    frames: list[np.ndarray] = []
    summaries = []
    try:
        for episode in range(episodes):
            observation, info = env.reset(seed=seed + episode)
            episode_start = np.ones(1, dtype=bool)
            if not window:
                frames.append(env.render())
            terminated = truncated = False
            while not (terminated or truncated):
                batch = {key: np.asarray(value)[None] for key, value in observation.items()}
                action = int(policy(batch, episode_start)[0])
                episode_start = np.zeros(1, dtype=bool)
                observation, _, terminated, truncated, info = env.step(action)
                if not window:
                    frames.append(env.render())
            for _ in range(hold_frames - 1):
                if window:
                    env.render()
                else:
                    frames.append(frames[-1])
            summaries.append({"delay": info["delay"], "t": info["t"], "outcome": info.get("outcome", "")})
    finally:
        env.close()
    return frames, summaries


def write_video(frames: Sequence[np.ndarray], path: str | os.PathLike, fps: float) -> Path:
    """Write RGB frames to a GIF (looping) or an MP4 (H.264 through imageio-ffmpeg)."""
    import imageio.v2 as imageio

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gif":
        imageio.mimsave(path, list(frames), format="GIF", duration=1000.0 / fps, loop=0)
    elif suffix == ".mp4":
        # H.264 in yuv420p needs even sides; pad by one black row/column where a side is odd.
        height, width = frames[0].shape[:2]
        pad = ((0, height % 2), (0, width % 2), (0, 0))
        with imageio.get_writer(path, format="FFMPEG", fps=fps, macro_block_size=1) as writer:
            for frame in frames:
                writer.append_data(np.pad(frame, pad))
    else:
        raise ValueError(f"cannot record to {path}: use a .gif or .mp4 file")
    return path
