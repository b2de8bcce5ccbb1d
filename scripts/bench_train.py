"""Training throughput: SPS of the `learner` and `hogwild` runtimes on the same agent and step budget,
both observation modes, with their ratio; learner-only samples/s; optionally time to the 90% target.

    python scripts/bench_train.py                       # the table, a few minutes on 2 cores
    python scripts/bench_train.py --time-to-target      # also train on 5..12 until 90% of the ceiling
    python scripts/bench_train.py --device cuda --actors 16 --modes pixels   # a GPU box
    python scripts/bench_train.py --compare REV worktree  # speed of the code at git REV vs now
    python scripts/bench_train.py --compare worktree --precisions fp32 bf16   # precisions, in turns
    python scripts/bench_train.py --compare worktree --compare-agents signed-count learned-count  # agents
    python scripts/bench_train.py --synchrony --agent lstm --modes pixels   # lag 0 vs actors ahead
    python scripts/bench_train.py --device-runtime      # --runtime device vs learner, in turns (CPU)
    python scripts/bench_train.py --device cuda --device-batches 1024 4096 16384   # envs vs samples/s

SPS is measured from the first trained batch to the end of the run (process start-up excluded).
With --compare, each revision (a git revision of the repository, or "worktree" for the files as
they are now) runs in its own subprocesses, the revisions taking turns round after round, so that
a change of load on a shared machine hits them alike; ratios are to the first revision. With
--precisions, every revision runs at each `--precision` in turn, and with --compare-agents each of
those agents in turn; ratios are to the first contender.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

if os.environ.get("BENCH_TRAIN_REVISION_TREE"):
    # A revision's subprocess imports that revision's packages only: an editable install's finder
    # would otherwise hand it the working tree's version of any module the revision lacks.
    sys.meta_path = [finder for finder in sys.meta_path if "__editable__" not in finder.__module__]

# The measures and comparisons live beside this script, in scripts/support/.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
from runtime_comparisons import compare_device_runtime, compare_synchrony, grow_device_batches  # noqa: E402
from training_measures import learner_samples_per_second, precision_options, training_run  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent


def source_tree(revision: str, folder: str) -> str:
    """A folder holding the package `nalu_rl` at a git revision ("worktree": as now) laid out as it
    installs, with envs/ and agents/ inside it; the top-level `envs` and `agents` stay beside it
    for revisions from before they were installed under nalu_rl."""
    tree = Path(folder) / revision.replace("/", "_")
    tree.mkdir(parents=True, exist_ok=True)
    if revision == "worktree":
        for name in ("agents", "envs", "nalu_rl"):
            shutil.copytree(REPOSITORY / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(
            ["git", "-C", str(REPOSITORY), "archive", revision, "agents", "envs", "nalu_rl"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for name in ("agents", "envs"):
        if not (tree / "nalu_rl" / name).exists():
            shutil.copytree(tree / name, tree / "nalu_rl" / name)
    return str(tree)


def measure_in_subprocess(
    tree: str,
    measure: str,
    obs: str,
    arguments: argparse.Namespace,
    precision: str | None = None,
    agent: str | None = None,
) -> float:
    """Run this script's `--measure` on the packages of `tree` (at `precision`, of `agent`, default
    --agent); the figure it prints."""
    command = [sys.executable, str(Path(__file__).resolve()), "--measure", measure, "--modes", obs]
    command += ["--agent", agent or arguments.agent, "--actors", str(arguments.actors)]
    command += ["--device", arguments.device]
    command += precision_options(precision)
    command += [
        "--envs-per-actor",
        str(arguments.envs_per_actor),
        "--batch-unrolls",
        str(arguments.batch_unrolls),
    ]
    command += ["--learner-steps", str(arguments.learner_steps), "--updates", str(arguments.updates)]
    # The revision's tree first; what else is on the path (packages installed with --target) after it.
    path = os.pathsep.join(part for part in (tree, os.environ.get("PYTHONPATH")) if part)
    environment = {**os.environ, "PYTHONPATH": path, "BENCH_TRAIN_REVISION_TREE": tree}
    result = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=tree, check=True)
    return float(result.stdout.split()[-1])


def compare_revisions(arguments: argparse.Namespace) -> None:
    """Learner-only samples/s and learner-runtime SPS of each revision, in turns; ratios to the first."""
    folder = tempfile.mkdtemp(prefix="bench_train-compare-")
    trees = {revision: source_tree(revision, folder) for revision in arguments.compare}
    precisions = arguments.precisions or [None]
    agents = arguments.compare_agents or [None]
    # Each contender is a revision at a precision with an agent, named "REV [PRECISION] [AGENT]".
    contenders = {
        " ".join(part for part in (revision, precision, agent) if part): (tree, precision, agent)
        for revision, tree in trees.items()
        for precision in precisions
        for agent in agents
    }
    measures = ["learner-only"] + ([] if arguments.skip_runtime else ["runtime"])
    figures = {
        (obs, measure, revision): []
        for obs in arguments.modes
        for measure in measures
        for revision in contenders
    }
    for round_index in range(arguments.rounds):
        for obs in arguments.modes:
            for measure in measures:
                for revision, (tree, precision, agent) in contenders.items():
                    figure = measure_in_subprocess(tree, measure, obs, arguments, precision, agent)
                    figures[obs, measure, revision].append(figure)
                    print(f"round {round_index + 1} {obs} {measure} {revision}: {figure:,.0f}", flush=True)
    print()
    first = next(iter(contenders))
    print(
        f"agent {' vs '.join(arguments.compare_agents or [arguments.agent])}, device {arguments.device}, "
        f"{arguments.actors} actors, "
        f"{arguments.rounds} rounds, median of the rounds, ratio to {first}"
    )
    print("| obs | measure | revision | median | ratio | per-round ratios |")
    print("|---|---|---|---|---|---|")
    for obs in arguments.modes:
        for measure in measures:
            for revision in contenders:
                values = figures[obs, measure, revision]
                ratios = [
                    value / base for value, base in zip(values, figures[obs, measure, first], strict=True)
                ]
                per_round = " ".join(f"{ratio:.2f}" for ratio in ratios)
                median = statistics.median(values)
                ratio = median / statistics.median(figures[obs, measure, first])
                print(f"| {obs} | {measure} | {revision} | {median:,.0f} | {ratio:.2f}x | {per_round} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="nac")
    parser.add_argument("--modes", nargs="+", default=["symbolic", "pixels"], choices=("symbolic", "pixels"))
    parser.add_argument("--actors", type=int, default=2, help="actor processes (and hogwild workers)")
    parser.add_argument("--envs-per-actor", type=int, default=64)
    parser.add_argument("--batch-unrolls", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--learner-steps", type=int, default=400_000, help="step budget of each learner run")
    parser.add_argument("--hogwild-steps", type=int, default=40_000, help="step budget of each hogwild run")
    parser.add_argument("--skip-hogwild", action="store_true")
    parser.add_argument(
        "--time-to-target", action="store_true", help="also train to 90%% of the ceiling on 5..12"
    )
    parser.add_argument(
        "--compare", nargs="+", metavar="REV", help="git revisions (or 'worktree') to compare, in turns"
    )
    parser.add_argument("--rounds", type=int, default=3, help="--compare: rounds of turns")
    parser.add_argument(
        "--precision", choices=("auto", "fp32", "bf16"), help="training --precision (default: the code's)"
    )
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=("auto", "fp32", "bf16"),
        help="--compare: run every revision at each of these precisions, in turns",
    )
    parser.add_argument(
        "--compare-agents",
        nargs="+",
        metavar="AGENT",
        help="--compare: run every revision with each of these agents, in turns (instead of --agent)",
    )
    parser.add_argument("--updates", type=int, default=10, help="learner updates timed for learner-only")
    parser.add_argument("--skip-runtime", action="store_true", help="--compare: learner-only figures only")
    parser.add_argument(
        "--synchrony",
        action="store_true",
        help="SPS with actors running ahead, synchronous actors and one process, in turns",
    )
    parser.add_argument(
        "--device-runtime",
        action="store_true",
        help="SPS of --runtime device against the learner runtime on train's defaults, in turns",
    )
    parser.add_argument(
        "--device-envs",
        type=int,
        nargs="*",
        default=[],
        help="--device-runtime: also the device runtime with each of these numbers of envs",
    )
    parser.add_argument(
        "--pixel-steps",
        type=int,
        help="--device-runtime: step budget of the pixel runs (default --learner-steps)",
    )
    parser.add_argument(
        "--device-batches",
        type=int,
        nargs="+",
        metavar="ENVS",
        help="the device runtime at each of these numbers of envs: SPS and learner-only samples/s",
    )
    parser.add_argument("--measure", choices=("learner-only", "runtime"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure:
        torch.set_num_threads(1)
        obs = arguments.modes[0]
        if arguments.measure == "learner-only":
            envs = arguments.envs_per_actor * arguments.batch_unrolls
            figure = learner_samples_per_second(
                arguments.agent, obs, arguments.device, envs, 20, arguments.updates, arguments.precision
            )
        else:
            folder = tempfile.mkdtemp(prefix="bench_train-")
            run = training_run(
                ["--agent", arguments.agent, "--obs", obs, "--eval-episodes", "0", "--no-progress"]
                + ["--target-fraction", "2", "--actors", str(arguments.actors), "--logdir", f"{folder}/run"]
                + [
                    "--envs-per-actor",
                    str(arguments.envs_per_actor),
                    "--batch-unrolls",
                    str(arguments.batch_unrolls),
                ]
                + ["--total-steps", str(arguments.learner_steps), "--device", arguments.device]
                + precision_options(arguments.precision)
            )
            figure = run.steady_steps_per_second()
        print(figure)
        return
    if arguments.compare:
        compare_revisions(arguments)
        return
    if arguments.synchrony:
        compare_synchrony(arguments)
        return
    if arguments.device_runtime:
        compare_device_runtime(arguments)
        return
    if arguments.device_batches:
        grow_device_batches(arguments)
        return

    common = ["--agent", arguments.agent, "--eval-episodes", "0", "--no-progress", "--target-fraction", "2"]
    common += ["--actors", str(arguments.actors), "--logdir"]
    folder = tempfile.mkdtemp(prefix="bench_train-")
    rows = []
    for obs in arguments.modes:
        learner_run = training_run(
            [*common, f"{folder}/learner-{obs}", "--obs", obs, "--device", arguments.device]
            + [
                "--envs-per-actor",
                str(arguments.envs_per_actor),
                "--batch-unrolls",
                str(arguments.batch_unrolls),
            ]
            + ["--total-steps", str(arguments.learner_steps)]
            + precision_options(arguments.precision)
        )
        learner_sps = learner_run.steady_steps_per_second()
        hogwild_sps = float("nan")
        if not arguments.skip_hogwild:
            hogwild_run = training_run(
                [*common, f"{folder}/hogwild-{obs}", "--obs", obs, "--runtime", "hogwild"]
                + ["--total-steps", str(arguments.hogwild_steps)]
            )
            hogwild_sps = hogwild_run.steady_steps_per_second()
        envs = arguments.envs_per_actor * arguments.batch_unrolls
        only = learner_samples_per_second(
            arguments.agent, obs, arguments.device, envs, 20, 10, arguments.precision
        )
        rows.append((obs, learner_sps, hogwild_sps, learner_sps / hogwild_sps, only))
        print(f"{obs}: learner {learner_sps:,.0f} SPS, hogwild {hogwild_sps:,.0f} SPS", flush=True)

    print()
    print(f"agent {arguments.agent}, {arguments.actors} actors/workers, device {arguments.device}")
    print("| obs | learner SPS | hogwild SPS | learner / hogwild | learner-only samples/s |")
    print("|---|---|---|---|---|")
    for obs, learner_sps, hogwild_sps, ratio, only in rows:
        print(f"| {obs} | {learner_sps:,.0f} | {hogwild_sps:,.0f} | {ratio:.1f}x | {only:,.0f} |")

    if arguments.time_to_target:
        print()
        print("| obs | time to 90% of the ceiling on 5..12 | steps | stop |")
        print("|---|---|---|---|")
        for obs in arguments.modes:
            run = training_run(
                ["--agent", arguments.agent, "--obs", obs, "--eval-episodes", "0", "--no-progress"]
                + ["--actors", str(arguments.actors), "--device", arguments.device]
                + ["--logdir", f"{folder}/target-{obs}", "--total-steps", "30000000"]
            )
            print(
                f"| {obs} | {run.elapsed_seconds():.0f} s | {run.steps:,} | {run.stop_reason} |", flush=True
            )


if __name__ == "__main__":
    main()
