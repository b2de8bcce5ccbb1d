"""`python -m nalu_rl.sweep`: train agents x seeds as one Ray Tune experiment, ending in the figure.

Each trial is one `python -m nalu_rl.train` run, started as a child process of the trial (its
own process group) in its own run folder, ROOT/NAME/<agent>-<task>-seed<k>/ (<task>: the observation
mode of a timing task, else the env id), so every trial
folder is an ordinary run folder (config.json, checkpoint.pt, run_status.json, TensorBoard events,
the evaluation CSV and PNG). A trial whose train process dies is retried with `--resume` on its
folder, so its step count continues from the last checkpoint. Ctrl-C stops every trial with
SIGINT (train then saves its checkpoint), and `--resume` continues the sweep, skipping the
trials that finished. At the end the trials' evaluation CSVs become one figure and one Markdown
table in the sweep folder.

Ray is imported only once the command line is checked (nalu_rl.sweep.ray_backend).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import add_import_option, add_trust_imports_option, one_line_errors, run_cli
from nalu_rl.sweep.control import load_ray_backend, stop_requests
from nalu_rl.sweep.folder import read_trial_status
from nalu_rl.sweep.plan import make_specs, plan_sweep, trial_resources
from nalu_rl.sweep.progress import SweepProgress
from nalu_rl.sweep.report import summarize
from nalu_rl.sweep.trial import TrialSpec, stop_leftover_train


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m nalu_rl.sweep` (the train options follow "--")."""
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.sweep",
        usage="python -m nalu_rl.sweep --agents AGENT [AGENT ...] --seeds SEEDS [options] [-- TRAIN OPTIONS]",
        description="Train every agent x seed as one nalu_rl.train run each, on Ray Tune (an embedded "
        "local Ray, or a cluster with --address), retrying trials whose process dies from their "
        "checkpoint, and end with the combined success-by-delay figure and table. Options after "
        '"--" go to every nalu_rl.train run (python -m nalu_rl.train --help lists them), e.g. '
        "-- --total-steps 6000000 --target-fraction 2.",
    )
    add = parser.add_argument
    add("--agents", nargs="+", metavar="AGENT", help="agents to train (see nalu_rl.train --agent)")
    add("--seeds", nargs="+", metavar="SEEDS", help="seeds: ranges and lists, e.g. 0-4, 0,2,5, 0-2,7")
    add(
        "--obs",
        choices=("pixels", "symbolic"),
        help="observation mode of a timing task (default: train's, pixels); not for other envs",
    )
    add("--name", help="sweep name: the sweep folder is ROOT/NAME (default <obs or env id>-<time>)")
    add("--root", default=str(Path("runs") / "sweeps"), help="folder of the sweep folders")
    add(
        "--address",
        help="join a running Ray cluster: auto (this machine's), HOST:PORT, or ray://HOST:10001 "
        "(default: start a local Ray on this machine's cores, stopped at the end)",
    )
    add(
        "--cpus-per-trial",
        type=int,
        help="CPUs per trial (default: train's actors + 1 learner, at most the cores of the largest node)",
    )
    add(
        "--gpus-per-trial",
        type=float,
        help="GPUs (or a fraction) per trial (default 1 with --device cuda, else 0)",
    )
    add("--max-concurrent", type=int, help="trials running at once at most (default: as resources allow)")
    add("--max-failures", type=int, default=3, help="retries of a trial whose train process dies (default 3)")
    add(
        "--resume",
        action="store_true",
        help="continue the sweep NAME: finished trials are kept, the others resume from their checkpoints; "
        "options not given again are those of the first run",
    )
    add("--verbose", action="store_true", help="show Ray's logs and Tune's status table")
    add_import_option(
        parser,
        where="passed on to every trial's train (by name, with the folder it was found in here on the "
        "trials' PYTHONPATH); with --resume, the modules of the sweep's recorded train options to import",
    )
    add_trust_imports_option(parser, what="the resumed sweep's sweep.json")
    return parser


def split_train_options(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """The sweep's own options and the train options after "--" (None when there is no "--")."""
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep as the command line says; return the exit code (0 all finished, 1 some failed,
    130 interrupted)."""
    sweep_argv, train_options = split_train_options(sys.argv[1:] if argv is None else argv)
    args = one_line_errors(build_parser()).parse_args(sweep_argv)
    plan = plan_sweep(args, train_options)
    backend = load_ray_backend()
    specs: list[TrialSpec] = []
    backend.start_ray(args.address, args.verbose)
    try:
        cpus, gpus = trial_resources(plan, args, backend.largest_node())
        specs = make_specs(plan, cpus)
        plan.write_sweep_file()
        pending = [
            spec for spec in specs if (read_trial_status(spec.folder) or {}).get("status") != "finished"
        ]
        progress = SweepProgress(plan.name, specs)
        print(
            f"sweep {plan.name}: {len(specs)} trials ({len(specs) - len(pending)} finished already), "
            f"{cpus} CPU{'s' if cpus != 1 else ''}{f' and {gpus:g} GPU' if gpus else ''} each; "
            f"folder {plan.folder}",
            flush=True,
        )
        interrupted = False
        if pending:
            with stop_requests() as stop_requested:
                backend.run_trials(plan.folder, args, pending, progress, cpus, gpus, stop_requested)
                interrupted = stop_requested()
        return summarize(plan, specs, progress, interrupted=interrupted)
    finally:
        backend.stop_ray()
        if args.address is None:
            for spec in specs:  # the trials stop their processes; this catches any whose trial was killed
                stop_leftover_train(spec.folder)


if __name__ == "__main__":
    run_cli(main)
