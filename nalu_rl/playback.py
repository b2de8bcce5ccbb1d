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

from nalu_rl.environment import observation_dict
from nalu_rl.evaluation import ModelPolicy, timing_environment, training_range

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
    show_count: bool = True,
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Play `episodes` episodes of `model` in a single env of its timing task and render each step.

    With `window` the frames go to a pygame window at `fps` and no frames are returned;
    otherwise the RGB frames (H, W, 3) uint8 are returned, the last frame of each episode
    repeated to last HOLD_LAST_FRAME_S. Also returns one dict per episode: delay, t, outcome.
    `delay` fixes T; by default T is drawn from the checkpoint's training range.
    With `show_count`, an agent with a counter gets a caption under each frame: the true time left
    T - t beside the agent's own reading of it (the linear readout of its counter state that
    `nalu_rl.counter` fits on the training range).
    """
    from nalu_rl.envs.rendering import HumanWindow, add_caption

    readout = fit_time_left_readout(model, config, seed=seed) if show_count else None
    delay_range = (delay, delay) if delay is not None else training_range(config)
    with timing_environment(config) as environment:
        env = environment.make(delay_range=delay_range, render_mode="rgb_array")
    screen = HumanWindow() if window else None
    hold_frames = max(1, round(HOLD_LAST_FRAME_S * fps))
    policy = ModelPolicy(model, 1, greedy=greedy, group_seeds=[seed])
    frames: list[np.ndarray] = []
    summaries = []

    def show(frame: np.ndarray, caption: str | None, repeat: int = 1) -> None:
        if readout is not None:
            frame = add_caption(frame, caption or "")
        for _ in range(repeat):
            if screen is not None:
                screen.show(frame, fps)
            else:
                frames.append(frame)

    try:
        for episode in range(episodes):
            observation, info = env.reset(seed=seed + episode)
            due = env.unwrapped.due_time(info["delay"])
            episode_start = np.ones(1, dtype=bool)
            terminated = truncated = False
            while not (terminated or truncated):
                frame = env.render()
                batch = {key: np.asarray(value)[None] for key, value in observation_dict(observation).items()}
                action = int(policy(batch, episode_start)[0])
                episode_start = np.zeros(1, dtype=bool)
                caption = None
                if readout is not None:
                    view, weights = readout
                    state = model.describe_state(policy.state)[view][0].detach().cpu().numpy()
                    count = float(np.append(state, 1.0) @ weights)
                    caption = f"time left {due - info['t']}   agent reads {count:.1f}"
                show(frame, caption)
                observation, _, terminated, truncated, info = env.step(action)
            show(env.render(), f"time left {due - info['t']}", repeat=hold_frames)
            summaries.append({"delay": info["delay"], "t": info["t"], "outcome": info.get("outcome", "")})
    finally:
        env.close()
        if screen is not None:
            screen.close()
    return frames, summaries


def fit_time_left_readout(
    model: torch.nn.Module, config: dict[str, Any], episodes: int = 8, seed: int = 0
) -> tuple[str, np.ndarray] | None:
    """The agent's counter state view and the least-squares weights (bias last) that read the time
    left T - t from it, fitted on episodes of the training-range delays; None without a counter."""
    from nalu_rl.state_probe import record_state_traces, remaining_steps_readout

    cores = getattr(model, "cores", {})
    views = list(cores["count"].state_names) if "count" in cores else []
    if not views:
        return None
    low, high = training_range(config)
    traces = record_state_traces(model, config, range(low, high + 1), episodes=episodes, seed=seed)
    weights, _ = remaining_steps_readout(traces, views[0], (low, high))
    return views[0], weights


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
