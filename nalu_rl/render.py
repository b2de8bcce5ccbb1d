"""`python -m nalu_rl.render`: watch a trained agent play in a pygame window, or `--record` its episodes
to a GIF or MP4 file without opening one."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import CliError, add_checkpoint_options, checkpoint_paths, load_checkpoint_option, run_cli
from nalu_rl.evaluation import timing_environment
from nalu_rl.playback import RECORD_FORMATS, play_episodes_to_frames, write_video


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.render`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.render",
        description="Play episodes of a checkpoint in a pygame window, or record them to a GIF/MP4.",
    )
    add_checkpoint_options(parser)
    parser.add_argument("--episodes", type=int, default=3, help="episodes to play (default 3)")
    parser.add_argument(
        "--delay", type=int, help="the delay T of every episode (default: drawn from the training range)"
    )
    parser.add_argument("--fps", type=float, default=4.0, help="frames per second (default 4)")
    parser.add_argument("--record", metavar="FILE", help="write a .gif or .mp4 instead of opening a window")
    parser.add_argument(
        "--no-count",
        dest="show_count",
        action="store_false",
        help="no caption with the time left and the agent's reading of it (agents with a counter)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the renderer."""
    args = build_parser().parse_args(argv)
    if args.episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {args.episodes}")
    if args.fps <= 0:
        raise CliError(f"--fps must be positive, got {args.fps}")
    if args.record and Path(args.record).suffix.lower() not in RECORD_FORMATS:
        raise CliError(f"--record: use a .gif or .mp4 file, got {args.record}")
    (path,) = checkpoint_paths(args)
    model, config = load_checkpoint_option(args, path)
    with timing_environment(config) as environment:
        max_delay = environment.max_delay
        render_modes = environment.probe.metadata.get("render_modes", ())
    if "rgb_array" not in render_modes:
        raise CliError(
            f"{environment.env_id} draws no frames (its render modes: {', '.join(render_modes) or 'none'}); "
            "python -m nalu_rl.evaluate works on it"
        )
    if args.delay is not None and not 1 <= args.delay <= max_delay:
        raise CliError(f"--delay must be in 1..{max_delay}, got {args.delay}")
    if args.record:
        record_dir = Path(args.record).resolve().parent
        if not record_dir.is_dir() or not os.access(record_dir, os.W_OK):
            raise CliError(f"cannot write to {record_dir}")
    frames, summaries = play_episodes_to_frames(
        model,
        config,
        episodes=args.episodes,
        delay=args.delay,
        seed=args.seed,
        greedy=args.greedy,
        fps=args.fps,
        window=not args.record,
        show_count=args.show_count,
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
