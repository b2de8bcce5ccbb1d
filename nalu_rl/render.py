"""Watch a trained agent play: `python -m nalu_rl.render` opens a pygame window, or `--record` writes
the episodes to a GIF or MP4 file without opening one. Each frame shows the grid, T and t, and the
outcome once an episode ends.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.cli import CliError, run_cli
from nalu_rl.evaluate import ModelPolicy, checkpoint_paths, evaluation_env_kwargs, training_range

RECORD_FORMATS = (".gif", ".mp4")
# How long the last frame of an episode stays on screen, in seconds, so its outcome can be read.
HOLD_LAST_FRAME_S = 1.0


def play_and_render(
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.render`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.render",
        description="Play episodes of a checkpoint in a pygame window, or record them to a GIF/MP4.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--checkpoint", metavar="PATH", help="checkpoint file or run folder")
    source.add_argument("--agent", metavar="NAME", help="shipped pretrained checkpoint checkpoints/NAME.pt")
    parser.add_argument("--episodes", type=int, default=3, help="episodes to play (default 3)")
    parser.add_argument(
        "--delay", type=int, help="the delay T of every episode (default: drawn from the training range)"
    )
    parser.add_argument("--fps", type=float, default=4.0, help="frames per second (default 4)")
    parser.add_argument("--record", metavar="FILE", help="write a .gif or .mp4 instead of opening a window")
    parser.add_argument("--seed", type=int, default=0, help="seed of the episodes and of action sampling")
    parser.add_argument(
        "--greedy", action="store_true", help="take the most likely action instead of sampling"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the renderer."""
    from nalu_rl.checkpoint import load_agent

    args = build_parser().parse_args(argv)
    if args.episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {args.episodes}")
    if args.fps <= 0:
        raise CliError(f"--fps must be positive, got {args.fps}")
    if args.record and Path(args.record).suffix.lower() not in RECORD_FORMATS:
        raise CliError(f"--record: use a .gif or .mp4 file, got {args.record}")
    (path,) = checkpoint_paths(
        [args.checkpoint] if args.checkpoint else None, [args.agent] if args.agent else None
    )
    model, config = load_agent(path)
    max_delay = int(evaluation_env_kwargs(config).get("max_delay", 1000))
    if args.delay is not None and not 1 <= args.delay <= max_delay:
        raise CliError(f"--delay must be in 1..{max_delay}, got {args.delay}")
    if args.record:
        record_dir = Path(args.record).resolve().parent
        if not record_dir.is_dir() or not os.access(record_dir, os.W_OK):
            raise CliError(f"cannot write to {record_dir}")
    frames, summaries = play_and_render(
        model,
        config,
        episodes=args.episodes,
        delay=args.delay,
        seed=args.seed,
        greedy=args.greedy,
        fps=args.fps,
        window=not args.record,
    )
    for index, summary in enumerate(summaries):
        print(f"episode {index}: T={summary['delay']} ended at t={summary['t']}: {summary['outcome']}")
    if args.record:
        try:
            write_video(frames, args.record, args.fps)
        except OSError as error:
            raise CliError(f"cannot write {args.record}: {error.strerror or error}") from None
        print(f"wrote {args.record} ({len(frames)} frames)")
    return 0


if __name__ == "__main__":
    run_cli(main)
