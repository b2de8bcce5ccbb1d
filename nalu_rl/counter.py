"""`python -m nalu_rl.counter --checkpoint ... -o counter.png`: did the agent learn a counter?

Plays episodes at several delays T and draws the agent's recurrent state against t, with a linear
readout of the remaining steps T - t fitted on the training range only (`nalu_rl.state_probe`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import (
    CliError,
    add_checkpoint_options,
    checkpoint_paths,
    delays_and_episodes_options,
    load_checkpoint_option,
    run_cli,
    writable_folder,
)
from nalu_rl.evaluation import training_range
from nalu_rl.state_probe import plot_counter_view, record_state_traces


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.counter`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.counter",
        description="Plot a checkpoint's recurrent state (NAC accumulator, LSTM) against time in episodes "
        "of several delays T, to see whether it learned a counter.",
    )
    add_checkpoint_options(parser)
    parser.add_argument("-o", "--output", default="counter.png", metavar="FILE.png", help="image to write")
    parser.add_argument("--delays", default="5,8,12,20,30,40", help="delays T to play (ranges and lists)")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per delay (default 8)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the counter view."""
    args = build_parser().parse_args(argv)
    delays = delays_and_episodes_options(args.delays, args.episodes)
    (path,) = checkpoint_paths(args)
    model, config = load_checkpoint_option(args, path)
    writable_folder(Path(args.output).resolve().parent)
    train_range = training_range(config)
    if not any(train_range[0] <= delay <= train_range[1] for delay in delays):
        raise CliError(f"--delays must include one in the training range {train_range[0]}-{train_range[1]}")
    traces = record_state_traces(
        model, config, delays, episodes=args.episodes, seed=args.seed, greedy=args.greedy
    )
    source = f"shipped {args.agent}" if args.agent else str(path)  # not the install's absolute path
    out = plot_counter_view(traces, args.output, train_range, title=f"{config.get('agent', '?')} ({source})")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    run_cli(main)
