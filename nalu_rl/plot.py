"""`python -m nalu_rl.plot`: success rate vs delay T from evaluation CSVs, one curve per agent."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import CliError, run_cli
from nalu_rl.environment import DEFAULT_ENV_ID
from nalu_rl.errors import one_line
from nalu_rl.evaluation import timing_environment
from nalu_rl.figures import curves_over_seeds, markdown_table, plot_success_by_delay, read_success_rows


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.plot`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.plot",
        description="Plot success rate vs delay T from evaluation CSVs, one curve per agent label "
        "(rows of the same label are seeds: mean and 95% t-interval).",
    )
    parser.add_argument(
        "csv", nargs="+", metavar="CSV", help="success_by_delay.csv files written by evaluate"
    )
    parser.add_argument("-o", "--output", required=True, metavar="FILE.png", help="image file to write")
    parser.add_argument(
        "--train-range",
        nargs=2,
        type=int,
        metavar=("LO", "HI"),
        help="training range of delays to shade (default: that of --env-id's task with its default "
        "options; TimeTrack's, 5 12, without --env-id)",
    )
    parser.add_argument("--title", help="figure title")
    parser.add_argument(
        "--env-id",
        metavar="ID",
        help="the timing task the CSVs come from; the delay axis then says what T is in it",
    )
    parser.add_argument(
        "--log-x",
        action="store_true",
        help="logarithmic delay axis, for delays far past 100 (default: linear)",
    )
    parser.add_argument("--table", metavar="FILE.md", help="also write a Markdown table of the curves")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the plot."""
    args = build_parser().parse_args(argv)
    if args.train_range and args.train_range[0] > args.train_range[1]:
        raise CliError(f"--train-range: LO must be <= HI, got {args.train_range[0]} {args.train_range[1]}")
    rows = read_success_rows(args.csv)
    with timing_environment({"env_id": args.env_id or DEFAULT_ENV_ID}) as environment:
        meaning = environment.delay_meaning if args.env_id else None
        train_range = tuple(args.train_range) if args.train_range else environment.delay_range
    try:
        path = plot_success_by_delay(
            rows,
            args.output,
            train_range=train_range,
            title=args.title,
            log_x=args.log_x,
            delay_meaning=meaning,
        )
        if args.table:
            Path(args.table).write_text(markdown_table(curves_over_seeds(rows)))
    except OSError as error:
        raise CliError(f"cannot write {error.filename or args.output}: {error.strerror or error}") from None
    except ValueError as error:  # matplotlib: an unknown image format
        raise CliError(one_line(str(error)) or type(error).__name__) from None
    print(f"wrote {path}" + (f" and {args.table}" if args.table else ""))
    return 0


if __name__ == "__main__":
    run_cli(main)
