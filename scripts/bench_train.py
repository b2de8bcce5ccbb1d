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
import contextlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

if os.environ.get("BENCH_TRAIN_REVISION_TREE"):
    # A revision's subprocess imports that revision's packages only: an editable install's finder
    # would otherwise hand it the working tree's version of any module the revision lacks.
    sys.meta_path = [finder for finder in sys.meta_path if "__editable__" not in finder.__module__]

from nalu_rl import train  # noqa: E402


def training_run(argv: list[str]) -> Any:
    """One quiet training run (no progress bar, no evaluation, no stop on success)."""
    with contextlib.redirect_stderr(io.StringIO()):
        return train.run_training(argv)


def learner_class() -> type:
    """The update's `Learner` of the revision at hand (older revisions kept it in the learner runtime's
    module, and before the runtime room in nalu_rl/learner.py)."""
    try:
        from nalu_rl.runtime.update import Learner
    except ImportError:
        try:
            from nalu_rl.runtime.learner import Learner
        except ImportError:
            from nalu_rl.learner import Learner
    return Learner


def learner_samples_per_second(
    agent: str, obs: str, device: str, envs: int, unroll: int, updates: int, precision: str | None = None
) -> float:
    """Samples/s of learner updates alone, on a batch of random-looking but valid unrolls."""
    from nalu_rl.envs import TimeTrackVectorEnv

    try:  # revisions before the runtime room kept these modules in nalu_rl/ itself
        from nalu_rl.runtime.actor import Actor
        from nalu_rl.runtime.rollout import RolloutBuffers
        from nalu_rl.runtime.workers import retain_freed_memory
    except ImportError:
        from nalu_rl.actor import Actor
        from nalu_rl.learner import retain_freed_memory
        from nalu_rl.rollout import RolloutBuffers
    from nalu_rl.config import Config

    Learner = learner_class()

    retain_freed_memory()  # as the learner runtime does
    # Without `precision` the code's default applies (revisions older than --precision lack it).
    chosen = {} if precision is None else {"precision": precision}
    config = Config(agent=agent, obs=obs, envs_per_actor=envs, unroll_length=unroll, **chosen)
    space = TimeTrackVectorEnv(1, **config.env_kwargs()).single_observation_space
    from nalu_rl.agents import make_agent

    acting = make_agent(agent, space).eval()
    buffers = RolloutBuffers(space, acting.initial_state(envs), unroll, envs, 1, shared=False)
    Actor(config, acting, envs, seed=0).unroll(buffers.slot(0))
    model = make_agent(agent, space).to(device)
    learner = Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), config)
    batch = buffers.batch([0], pin_memory=device == "cuda").to(device)
    return timed_updates(learner, batch, updates, device)


def timed_updates(learner: Any, batch: Any, updates: int, device: str) -> float:
    """Samples/s of `updates` learner updates on one batch, after one untimed warm-up update."""
    learner.update(batch)
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(updates):
        learner.update(batch)
    if device == "cuda":
        torch.cuda.synchronize()
    return updates * batch.num_steps / (time.perf_counter() - started)


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


def compare_synchrony(arguments: argparse.Namespace) -> None:
    """SPS of the learner runtime with actors running ahead, with synchronous actors and in one
    process, taking turns round after round; ratios to actors running ahead."""
    settings = {
        "actors ahead": ["--actors", str(arguments.actors), "--no-synchronous"],
        "synchronous": ["--actors", str(arguments.actors), "--synchronous"],
        "one process": ["--actors", "0"],
    }
    folder = tempfile.mkdtemp(prefix="bench_train-synchrony-")
    figures: dict[tuple[str, str], list[float]] = {}
    for obs in arguments.modes:
        figures.update({(obs, name): [] for name in settings})
    for round_index in range(arguments.rounds):
        for obs in arguments.modes:
            for name, options in settings.items():
                run = training_run(
                    ["--agent", arguments.agent, "--obs", obs, "--eval-episodes", "0", "--no-progress"]
                    + ["--target-fraction", "2", "--total-steps", str(arguments.learner_steps)]
                    + ["--envs-per-actor", str(arguments.envs_per_actor)]
                    + ["--batch-unrolls", str(arguments.batch_unrolls), "--device", arguments.device]
                    + [*options, "--logdir", f"{folder}/{round_index}-{obs}-{name.replace(' ', '-')}"]
                )
                figure = run.steady_steps_per_second()
                figures[obs, name].append(figure)
                print(f"round {round_index + 1} {obs} {name}: {figure:,.0f} SPS", flush=True)
    print()
    print(f"agent {arguments.agent}, {arguments.actors} actors, {arguments.rounds} rounds, median SPS")
    print("| obs | setting | median SPS | ratio to actors ahead | per-round ratios |")
    print("|---|---|---|---|---|")
    for obs in arguments.modes:
        base = figures[obs, "actors ahead"]
        for name in settings:
            values = figures[obs, name]
            per_round = " ".join(f"{value / first:.2f}" for value, first in zip(values, base, strict=True))
            ratio = statistics.median(values) / statistics.median(base)
            print(f"| {obs} | {name} | {statistics.median(values):,.0f} | {ratio:.2f}x | {per_round} |")


def device_runtime_settings(arguments: argparse.Namespace) -> dict[str, list[str]]:
    """The runtimes --device-runtime compares: the learner runtime and the device runtime on train's
    defaults (the same envs: the device runtime steps --actors x --envs-per-actor), and the device
    runtime with more envs for each of --device-envs."""
    settings = {
        "learner (defaults)": [],
        "device (defaults, same envs)": ["--runtime", "device"],
    }
    for envs in arguments.device_envs:
        settings[f"device, {envs} envs"] = [
            "--runtime",
            "device",
            "--actors",
            "1",
            "--envs-per-actor",
            str(envs),
        ]
    return settings


def compare_device_runtime(arguments: argparse.Namespace) -> None:
    """SPS of the learner runtime and the device runtime (train's defaults otherwise), taking turns
    round after round in this process, so that the load of a shared machine hits them alike."""
    settings = device_runtime_settings(arguments)
    folder = tempfile.mkdtemp(prefix="bench_train-device-")
    steps = {"symbolic": arguments.learner_steps, "pixels": arguments.pixel_steps or arguments.learner_steps}
    figures: dict[tuple[str, str], list[float]] = {}
    for obs in arguments.modes:
        figures.update({(obs, name): [] for name in settings})
    for round_index in range(arguments.rounds):
        for obs in arguments.modes:
            for number, (name, options) in enumerate(settings.items()):
                run = training_run(
                    ["--agent", arguments.agent, "--obs", obs, "--eval-episodes", "0", "--no-progress"]
                    + ["--target-fraction", "2", "--total-steps", str(steps[obs])]
                    + ["--device", arguments.device, *precision_options(arguments.precision), *options]
                    + ["--logdir", f"{folder}/{round_index}-{obs}-{number}"]
                )
                figure = run.steady_steps_per_second()
                figures[obs, name].append(figure)
                print(f"round {round_index + 1} {obs} {name}: {figure:,.0f} SPS", flush=True)
    print()
    first = next(iter(settings))
    print(f"agent {arguments.agent}, device {arguments.device}, {arguments.rounds} rounds, median SPS")
    print(f"| obs | runtime | median SPS | ratio to {first} | per-round ratios |")
    print("|---|---|---|---|---|")
    for obs in arguments.modes:
        base = figures[obs, first]
        for name in settings:
            values = figures[obs, name]
            per_round = " ".join(
                f"{value / reference:.2f}" for value, reference in zip(values, base, strict=True)
            )
            ratio = statistics.median(values) / statistics.median(base)
            print(f"| {obs} | {name} | {statistics.median(values):,.0f} | {ratio:.2f}x | {per_round} |")


def device_learner_samples_per_second(
    agent: str, obs: str, device: str, envs: int, updates: int, precision: str | None = None
) -> float:
    """Samples/s of learner updates alone on one unroll of `envs` tensor envs played on `device`."""
    from nalu_rl.agents import make_agent
    from nalu_rl.config import Config
    from nalu_rl.runtime.device import DeviceActor
    from nalu_rl.runtime.device_env import make_tensor_env

    Learner = learner_class()

    chosen = {} if precision is None else {"precision": precision}
    config = Config(agent=agent, obs=obs, runtime="device", device=device, **chosen)
    env = make_tensor_env(config, envs, device, seed=0)
    model = make_agent(agent, env.single_observation_space).to(device)
    batch = DeviceActor(model, env, config.unroll_length, config.precision, seed=0).unroll()
    learner = Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), config)
    return timed_updates(learner, batch, updates, device)


def grow_device_batches(arguments: argparse.Namespace) -> None:
    """The device runtime at each of --device-batches envs (one batch each): end-to-end SPS and the
    learner-only samples/s on a batch of that size; a mode stops growing once the SPS gains less
    than 10% over the previous size (the learner is fed)."""
    folder = tempfile.mkdtemp(prefix="bench_train-batches-")
    rows = []
    for obs in arguments.modes:
        previous = 0.0
        for envs in arguments.device_batches:
            only = device_learner_samples_per_second(
                arguments.agent, obs, arguments.device, envs, arguments.updates, arguments.precision
            )
            run = training_run(
                ["--agent", arguments.agent, "--obs", obs, "--eval-episodes", "0", "--no-progress"]
                + [
                    "--target-fraction",
                    "2",
                    "--total-steps",
                    str(max(arguments.learner_steps, 4 * 20 * envs)),
                ]
                + ["--runtime", "device", "--actors", "1", "--envs-per-actor", str(envs)]
                + ["--device", arguments.device, *precision_options(arguments.precision)]
                + ["--logdir", f"{folder}/{obs}-{envs}"]
            )
            sps = run.steady_steps_per_second()
            rows.append((obs, envs, sps, only))
            print(
                f"{obs} {envs} envs: {sps:,.0f} SPS end to end, learner alone {only:,.0f} samples/s",
                flush=True,
            )
            if sps < 1.1 * previous:
                break
            previous = sps
    print()
    print(f"agent {arguments.agent}, --runtime device, device {arguments.device}, unroll 20")
    print("| obs | envs (batch = 20 x envs) | SPS end to end | learner-only samples/s | SPS / learner-only |")
    print("|---|---|---|---|---|")
    for obs, envs, sps, only in rows:
        print(f"| {obs} | {envs} | {sps:,.0f} | {only:,.0f} | {sps / only:.2f} |")


def precision_options(precision: str | None) -> list[str]:
    """The training option that sets `precision`; none for the code's default."""
    return [] if precision is None else ["--precision", precision]


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
