"""Comparisons of scripts/bench_train.py (a module of it, not a command): actors ahead against
synchronous ones, the device runtime against the learner runtime, and the device runtime's SPS as
its envs grow."""

from __future__ import annotations

import argparse
import statistics
import tempfile

from training_measures import device_learner_samples_per_second, precision_options, training_run


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
