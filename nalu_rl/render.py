"""`python -m nalu_rl.render`: watch a trained agent play in a pygame window, or `--record` its episodes
to a GIF or MP4 file without opening one."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import (
    CliError,
    add_import_option,
    checkpoint_paths,
    import_option_modules,
    run_cli,
    shipped_agent_help,
)
from nalu_rl.playback import RECORD_FORMATS, play_episodes_to_frames, write_video


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.render`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.render",
        description="Play episodes of a checkpoint in a pygame window, or record them to a GIF/MP4.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--checkpoint", metavar="PATH", help="checkpoint file or run folder")
    source.add_argument("--agent", metavar="NAME", help=shipped_agent_help())
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
    parser.add_argument(
        "--no-count",
        dest="show_count",
        action="store_false",
        help="no caption with the time left and the agent's reading of it (agents with a counter)",
    )
    add_import_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the renderer."""
    from nalu_rl.checkpoint import load_agent

    args = build_parser().parse_args(argv)
    import_option_modules(args)
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
    max_delay = int((config.get("env") or {}).get("max_delay", 1000))
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
