"""Makes docs/PERFORMANCE.md, "Sweeps on Ray".

What a sweep on Ray costs: a 2-trial `nalu_rl.sweep` against the same two `nalu_rl.train` runs back
to back, wall time of each in one script run (Ray's start-up and shutdown included).

    python scripts/experiments/bench_sweep.py [--agent nac] [--seeds 0 1] [--rounds 1] [-- TRAIN OPTIONS]

The train options default to a symbolic run of an estimated minute on a quiet 2-core machine:
`--obs symbolic --total-steps 1000000 --eval-episodes 20 --target-fraction 2`. With the default 2
actors a trial asks for 3 CPUs, so on 2 cores the sweep runs one trial at a time, as the back-to-back
runs do. With --rounds N the two take turns N times (the order swapped every round), so that a
change of load on a shared machine hits both alike; the overhead is sweep / back-to-back - 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TRAIN_OPTIONS = [
    "--obs",
    "symbolic",
    "--total-steps",
    "1000000",
    "--eval-episodes",
    "20",
    "--target-fraction",
    "2",
]


def run(command: list[str], log: Path) -> float:
    """Run a command from the repository root (this checkout's code), output to `log`; its wall seconds."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.perf_counter()
    with open(log, "w") as output:
        subprocess.run(
            command, cwd=REPO_ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT, check=True
        )
    return time.perf_counter() - started


def back_to_back(
    folder: Path, agent: str, seeds: list[int], train_options: list[str]
) -> tuple[float, list[float]]:
    """The train runs one after the other: total and per-run seconds."""
    seconds = []
    for seed in seeds:
        command = [
            sys.executable,
            "-m",
            "nalu_rl.train",
            "--agent",
            agent,
            "--seed",
            str(seed),
            "--no-progress",
            "--logdir",
            str(folder / f"train-{agent}-seed{seed}"),
            *train_options,
        ]
        seconds.append(run(command, folder / f"train-{agent}-seed{seed}.log"))
    return sum(seconds), seconds


def sweep(folder: Path, agent: str, seeds: list[int], train_options: list[str]) -> float:
    """The same runs as one sweep on an embedded local Ray: its wall seconds."""
    obs = train_options[train_options.index("--obs") + 1] if "--obs" in train_options else "pixels"
    options = [
        option
        for index, option in enumerate(train_options)
        if option != "--obs" and (index == 0 or train_options[index - 1] != "--obs")
    ]
    command = [
        sys.executable,
        "-m",
        "nalu_rl.sweep",
        "--agents",
        agent,
        "--seeds",
        ",".join(map(str, seeds)),
        "--obs",
        obs,
        "--root",
        str(folder),
        "--name",
        "bench",
        "--",
        *options,
    ]
    return run(command, folder / "sweep.log")


def main() -> None:
    argv = sys.argv[1:]
    train_options = argv[argv.index("--") + 1 :] if "--" in argv else DEFAULT_TRAIN_OPTIONS
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="nac")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    print(
        f"{len(args.seeds)} runs of {args.agent}, train options: {' '.join(train_options)}; "
        f"{os.cpu_count()} cores"
    )
    ratios = []
    for round_index in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench-sweep-") as temporary:
            folder = Path(temporary)
            (folder / "direct").mkdir()
            (folder / "sweep").mkdir()
            times: dict[str, float] = {}
            order = ("direct", "sweep") if round_index % 2 == 0 else ("sweep", "direct")
            for kind in order:
                load = os.getloadavg()[0]
                if kind == "direct":
                    times["direct"], each = back_to_back(
                        folder / "direct", args.agent, args.seeds, train_options
                    )
                    detail = " + ".join(f"{seconds:.1f}" for seconds in each)
                    print(
                        f"round {round_index + 1}: train back to back {times['direct']:.1f} s ({detail}); "
                        f"load average at start {load:.1f}",
                        flush=True,
                    )
                else:
                    times["sweep"] = sweep(folder / "sweep", args.agent, args.seeds, train_options)
                    print(
                        f"round {round_index + 1}: sweep {times['sweep']:.1f} s; "
                        f"load average at start {load:.1f}",
                        flush=True,
                    )
            ratios.append(times["sweep"] / times["direct"])
            print(
                f"round {round_index + 1}: sweep / back to back = {ratios[-1]:.3f} "
                f"(overhead {100 * (ratios[-1] - 1):+.1f}%)",
                flush=True,
            )
    if len(ratios) > 1:
        mean = sum(ratios) / len(ratios)
        print(
            f"mean over {len(ratios)} rounds: sweep / back to back = {mean:.3f} "
            f"(overhead {100 * (mean - 1):+.1f}%)"
        )


if __name__ == "__main__":
    main()
