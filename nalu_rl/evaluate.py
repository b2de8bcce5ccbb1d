"""`python -m nalu_rl.evaluate`: success rate per delay T of one or more checkpoints, CSV and PNG."""

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
from nalu_rl.evaluation import (
    CSV_NAME,
    DEFAULT_MAX_BATCH,
    PNG_NAME,
    DelayResult,
    success_by_delay,
    timing_environment,
    write_success_csv,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.evaluate`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.evaluate",
        description="Success rate per delay T of one or more checkpoints; writes "
        f"OUT/{CSV_NAME} and OUT/{PNG_NAME}.",
    )
    add_checkpoint_options(parser, several=True)
    parser.add_argument(
        "--delays", default="1-40", help="delays T to evaluate: ranges and lists, e.g. 1-10,20,40"
    )
    parser.add_argument("--episodes", type=int, default=200, help="episodes per delay (default 200)")
    parser.add_argument(
        "--out", default="eval", help="output folder for the CSV and the PNG (default ./eval)"
    )
    parser.add_argument(
        "--label",
        nargs="+",
        metavar="LABEL",
        help="curve labels, one per checkpoint in order (default: each checkpoint's agent name; "
        "checkpoints sharing a label are averaged as seeds of one curve)",
    )
    parser.add_argument(
        "--train-range",
        nargs=2,
        type=int,
        metavar=("LO", "HI"),
        help="training range shaded on the plot (default: the first checkpoint's)",
    )
    parser.add_argument("--device", default="cpu", help="torch device for the policy (default cpu)")
    parser.add_argument(
        "--max-batch", type=int, default=DEFAULT_MAX_BATCH, help="most observations per policy call"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the evaluation."""
    from nalu_rl.figures import plot_success_by_delay

    args = build_parser().parse_args(argv)
    delays = delays_and_episodes_options(args.delays, args.episodes)
    if args.max_batch < 1:
        raise CliError(f"--max-batch must be >= 1, got {args.max_batch}")
    paths = checkpoint_paths(args)
    if args.label and len(args.label) != len(paths):
        raise CliError(f"--label names {len(args.label)} curves for {len(paths)} checkpoints")
    # Every checkpoint loads (and is consented to) before anything is written.
    loaded = [(path, *load_checkpoint_option(args, path, device=args.device)) for path in paths]
    out_dir = writable_folder(args.out)
    rows, train_range, meanings = [], args.train_range, set()
    for index, (path, model, config) in enumerate(loaded):
        with timing_environment(config) as environment:  # the limits and the range are the task's
            max_delay, task_range = environment.max_delay, environment.delay_range
            meanings.add(environment.delay_meaning)
            obs_mode = environment.kwargs.get("obs_mode")
            task = environment.env_id + (f", --obs {obs_mode}" if obs_mode else "")
        if delays[-1] > max_delay:
            raise CliError(f"delay {delays[-1]} exceeds the environment's max_delay {max_delay} ({path})")
        label = args.label[index] if args.label else None
        results = success_by_delay(
            model,
            config,
            delays,
            episodes=args.episodes,
            seed=args.seed,
            greedy=args.greedy,
            device=args.device,
            label=label,
            max_batch=args.max_batch,
        )
        train_range = train_range or task_range
        print_summary(path, results, task)
        rows.extend(results)
    csv_path = write_success_csv(rows, out_dir / CSV_NAME)
    # The axis says what T is when every checkpoint trained on tasks that agree on it.
    meaning = meanings.pop() if len(meanings) == 1 else None
    plot_success_by_delay(
        [row.as_row() for row in rows],
        out_dir / PNG_NAME,
        train_range=tuple(train_range),
        delay_meaning=meaning,
    )
    print(f"wrote {csv_path} and {out_dir / PNG_NAME}")
    return 0


def print_summary(path: Path, results: Sequence[DelayResult], task: str) -> None:
    """Print the checkpoint, its agent and its task, then one line per delay: success rate, its
    interval and the ceiling."""
    print(f"{path} ({results[0].agent if results else '?'} on {task})")
    for result in results:
        low, high = result.interval
        print(
            f"  T={result.delay:3d}  success {result.success_rate:5.3f} [{low:.3f}, {high:.3f}]"
            f"  ceiling {result.ceiling:5.3f}  n={result.episodes}"
        )


if __name__ == "__main__":
    run_cli(main)
