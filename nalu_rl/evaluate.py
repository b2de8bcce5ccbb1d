"""`python -m nalu_rl.evaluate`: success rate per delay T of one or more checkpoints, CSV and PNG."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import (
    CliError,
    add_import_option,
    checkpoint_paths,
    delays_and_episodes_options,
    import_option_modules,
    run_cli,
    shipped_agent_help,
    writable_folder,
)
from nalu_rl.evaluation import (
    CSV_NAME,
    DEFAULT_MAX_BATCH,
    PNG_NAME,
    DelayResult,
    delay_meaning,
    success_by_delay,
    training_range,
    write_success_csv,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.evaluate`."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.evaluate",
        description="Success rate per delay T of one or more checkpoints; writes "
        f"OUT/{CSV_NAME} and OUT/{PNG_NAME}.",
    )
    parser.add_argument("--checkpoint", nargs="+", metavar="PATH", help="checkpoint files or run folders")
    parser.add_argument("--agent", nargs="+", metavar="NAME", help=shipped_agent_help())
    parser.add_argument(
        "--delays", default="1-40", help="delays T to evaluate: ranges and lists, e.g. 1-10,20,40"
    )
    parser.add_argument("--episodes", type=int, default=200, help="episodes per delay (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the environments and action sampling")
    parser.add_argument(
        "--greedy", action="store_true", help="take the most likely action instead of sampling"
    )
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
    add_import_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of the evaluation."""
    from nalu_rl.checkpoint import load_agent
    from nalu_rl.figures import plot_success_by_delay

    args = build_parser().parse_args(argv)
    import_option_modules(args)
    delays = delays_and_episodes_options(args.delays, args.episodes)
    if args.max_batch < 1:
        raise CliError(f"--max-batch must be >= 1, got {args.max_batch}")
    paths = checkpoint_paths(args.checkpoint, args.agent)
    if args.label and len(args.label) != len(paths):
        raise CliError(f"--label names {len(args.label)} curves for {len(paths)} checkpoints")
    out_dir = writable_folder(args.out)
    rows, train_range, meanings = [], args.train_range, set()
    for index, path in enumerate(paths):
        model, config = load_agent(path, device=args.device)
        max_delay = int((config.get("env") or {}).get("max_delay", 1000))
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
        train_range = train_range or training_range(config)
        meanings.add(delay_meaning(config))
        print_summary(path, results)
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


def print_summary(path: Path, results: Sequence[DelayResult]) -> None:
    """Print one line per delay: success rate, its interval and the ceiling."""
    print(f"{path} ({results[0].agent if results else '?'})")
    for result in results:
        low, high = result.interval
        print(
            f"  T={result.delay:3d}  success {result.success_rate:5.3f} [{low:.3f}, {high:.3f}]"
            f"  ceiling {result.ceiling:5.3f}  n={result.episodes}"
        )


if __name__ == "__main__":
    run_cli(main)
