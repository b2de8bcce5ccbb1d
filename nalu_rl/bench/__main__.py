"""`python -m nalu_rl.bench`: the timing benchmark, agents x tasks x seeds under one protocol, ending
in the scorecard.

Each trial is one `python -m nalu_rl.train` run (the sweep's trial, on an embedded local Ray or a
cluster), followed in the same Ray worker by the protocol's evaluation of the model it kept. A run
cut short continues with `--resume --name NAME`: finished trials are kept, the others resume from
their checkpoints. The scorecard is computed from the per-seed CSVs alone, so
`--scorecard FOLDER` recomputes it from committed data (docs/data/benchmark).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.bench.evaluation import evaluate_trial
from nalu_rl.bench.figure import SCORECARD_FIGURE, plot_scorecard
from nalu_rl.bench.plan import BenchPlan, make_trial_specs, plan_bench, result_csv
from nalu_rl.bench.protocol import (
    BENCHMARK_TASKS,
    EVALUATION_SEED_OFFSET,
    FULL_PROTOCOL,
    QUICK_PROTOCOL,
    Protocol,
)
from nalu_rl.bench.scorecard import read_seed_results, score_rows, write_scorecard
from nalu_rl.cli import add_import_option, add_trust_imports_option, one_line_errors, run_cli
from nalu_rl.config import Config, parse_config
from nalu_rl.runtime.training import learner_threads
from nalu_rl.sweep.folder import last_exit_description, read_trial_status
from nalu_rl.sweep.plan import trial_cpus
from nalu_rl.sweep.progress import SweepProgress
from nalu_rl.sweep.trial import TrialSpec, stop_leftover_train


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.bench`."""
    protocol = FULL_PROTOCOL
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.bench",
        description=(
            "The timing benchmark: train every agent x task x seed and score how far each agent's "
            "sense of time holds beyond its training range. The protocol is fixed: each agent trains "
            "on its own training defaults (symbolic observations where a task has pixels too; delays "
            f"5..12) for at most {protocol.budget_steps:,} steps; the model it keeps (best.pt, its best "
            "recent training-range success, else its last checkpoint) is evaluated at T = 5..12 and "
            f"{', '.join(map(str, protocol.far_delays))}, {protocol.episodes} episodes each, actions "
            f"sampled, on evaluation seed = training seed + {EVALUATION_SEED_OFFSET:,}. The scorecard "
            "(scorecard.csv, .md and .png in the benchmark folder) gives per agent and task the "
            "in-range fraction of the ceiling with its 95% interval over seeds, the fraction at each "
            "far T, the largest T to which >= 0.9 of the ceiling holds in 4 of 5 seeds (3 of 3), and "
            "the extrapolation score: the mean fraction of the ceiling over the far T. "
            "docs/BENCHMARK.md has the tasks and the results."
        ),
    )
    add = parser.add_argument
    add(
        "--agents",
        nargs="+",
        metavar="AGENT",
        help="agents to score (default: lstm gru nac signed-count learned-count; a user's with --import)",
    )
    add(
        "--tasks",
        nargs="+",
        metavar="TASK",
        help=f"tasks: {', '.join(BENCHMARK_TASKS)} (the default: all), or any registered env id that "
        "follows the timing-task interface (a user's, with --import)",
    )
    add(
        "--seeds", nargs="+", metavar="SEEDS", help="training seeds: ranges and lists, e.g. 0-4 (default 0-4)"
    )
    add(
        "--quick",
        action="store_true",
        help=f"a smoke run of the whole pipeline in about a minute: {QUICK_PROTOCOL.budget_steps:,} "
        f"steps, {QUICK_PROTOCOL.episodes} episodes at T = "
        f"{', '.join(map(str, QUICK_PROTOCOL.delays))}, lstm on ReadySetGo and TimeTrack, seed 0 "
        "(its numbers mean nothing)",
    )
    add("--name", help="benchmark run name: its folder is ROOT/NAME (default bench-<time>, quick-<time>)")
    add(
        "--root",
        default=str(Path("runs") / "bench"),
        help="folder of the benchmark folders (default runs/bench)",
    )
    add(
        "--resume",
        action="store_true",
        help="continue the run NAME with its recorded grid and protocol (--agents, --tasks, --seeds "
        "given again replace the recorded ones)",
    )
    add(
        "--results",
        metavar="DIR",
        help="keep the per-seed CSVs in DIR instead of the benchmark folder's results/: a trial whose CSV "
        "is already there counts as done (e.g. --results docs/data/benchmark continues the committed "
        "grid in a fresh clone), and the scorecard is written there too",
    )
    add(
        "--scorecard",
        metavar="RESULTS",
        help="train nothing: compute the scorecard from a folder of per-seed CSVs "
        "(<task>/<agent>-seed<k>.csv, e.g. docs/data/benchmark) and write it there",
    )
    add(
        "--address",
        help="join a running Ray cluster (auto, HOST:PORT or ray://HOST:10001); default: a local Ray "
        "on this machine's cores, stopped at the end",
    )
    add("--max-concurrent", type=int, help="trials running at once at most (default: as resources allow)")
    add("--max-failures", type=int, default=3, help="retries of a trial whose train process dies (default 3)")
    add("--verbose", action="store_true", help="show Ray's logs and Tune's status table")
    add_import_option(
        parser, where="passed on to every trial (a user's agents and tasks are registered there)"
    )
    add_trust_imports_option(parser, what="the resumed run's bench.json")
    return parser


def write_report(results: Path, protocol: Protocol, out_folder: Path, show: bool = True) -> list[Path]:
    """The scorecard of every per-seed CSV in `results`, written to `out_folder`; prints the table
    when `show`."""
    seed_results = read_seed_results(results)
    rows = score_rows(seed_results, protocol)
    written = write_scorecard(rows, protocol, out_folder)
    written.append(plot_scorecard(rows, seed_results, protocol, out_folder / SCORECARD_FIGURE))
    if show:
        print(written[1].read_text(), end="")
    return written


def evaluate_finished_trials(plan: BenchPlan, specs: Sequence[TrialSpec]) -> None:
    """Evaluate here the trials whose training finished in an earlier run but whose CSV is missing."""
    for spec in specs:
        status = read_trial_status(spec.folder) or {}
        out_csv = result_csv(plan, spec)
        if status.get("status") == "finished" and not out_csv.exists():
            print(f"evaluating {spec.name} (trained in an earlier run)", flush=True)
            evaluate_trial(spec.folder, out_csv, plan.protocol, spec.seed, plan.imports)


def run_trials(plan: BenchPlan, args: argparse.Namespace, specs: list[TrialSpec]) -> bool:
    """Train and evaluate the trials of `specs` without a CSV on Ray; True if a stop was requested."""
    from nalu_rl.bench import ray_trial
    from nalu_rl.sweep.control import load_ray_backend, stop_requests

    backend = load_ray_backend()
    pending = [spec for spec in specs if not result_csv(plan, spec).exists()]
    print(
        f"benchmark {plan.name}: {len(specs)} trials ({len(specs) - len(pending)} scored already); "
        f"folder {plan.folder}",
        flush=True,
    )
    if not pending:
        return False
    backend.start_ray(args.address, args.verbose)
    try:
        node_cpus = int(backend.largest_node()["CPU"]) or 1
        cpus = max(1, min(max(trial_config(spec)[1] for spec in pending), node_cpus))
        # Each train process sizes its learner's threads to the CPUs its trial holds, not the node's.
        pending = [
            dataclasses.replace(spec, learner_threads=learner_threads(trial_config(spec)[0], cores=cpus))
            for spec in pending
        ]
        shared = {
            ray_trial.PROTOCOL_KEY: plan.protocol.to_dict(),
            ray_trial.RESULTS_KEY: {spec.name: str(result_csv(plan, spec)) for spec in pending},
            ray_trial.IMPORTS_KEY: plan.imports,
            ray_trial.THREADS_KEY: cpus,
        }
        progress = SweepProgress(plan.name, pending)
        with stop_requests() as stop_requested:
            backend.run_trials(
                plan.folder,
                args,
                pending,
                progress,
                cpus,
                0.0,
                stop_requested,
                trainable=ray_trial.BenchTrial,
                shared_config=shared,
            )
            return stop_requested()
    finally:
        backend.stop_ray()
        if args.address is None:
            for spec in pending:
                stop_leftover_train(spec.folder)


def trial_config(spec: TrialSpec) -> tuple[Config, int]:
    """A trial's train config as train resolves its options, and the CPUs the trial uses."""
    observation = ["--obs", spec.obs] if spec.obs else []
    config, _ = parse_config(["--agent", spec.agent, *observation, *spec.train_options])
    return config, trial_cpus(config)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line says; return the exit code (0 every trial scored, 1 some
    failed, 130 interrupted or unfinished)."""
    args = one_line_errors(build_parser()).parse_args(sys.argv[1:] if argv is None else argv)
    if args.scorecard:
        results = Path(args.scorecard)
        write_report(results, QUICK_PROTOCOL if args.quick else FULL_PROTOCOL, results)
        return 0
    plan = plan_bench(args)
    plan.write_bench_file()
    specs = make_trial_specs(plan)
    evaluate_finished_trials(plan, specs)
    interrupted = run_trials(plan, args, specs)
    scored = [spec for spec in specs if result_csv(plan, spec).exists()]
    missing = [spec for spec in specs if spec not in scored]
    print(f"benchmark {plan.name}: {len(scored)} of {len(specs)} trials scored")
    for spec in missing:
        status = read_trial_status(spec.folder) or {}
        reason = status.get("error") or last_exit_description(spec.folder) or "not run"
        print(f"  not scored: {spec.name}: {reason}")
    if missing:
        print(f"  continue with: python -m nalu_rl.bench --resume --name {plan.name} --root {args.root}")
    if scored:
        written = write_report(plan.results, plan.protocol, plan.folder)
        if plan.results_folder is not None:
            written += write_report(plan.results, plan.protocol, plan.results_folder, show=False)
        print("wrote " + ", ".join(str(path) for path in written))
    if interrupted or missing:
        return 130 if interrupted else 1
    return 0


if __name__ == "__main__":
    run_cli(main)
