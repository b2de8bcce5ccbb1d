"""Measure how long a training run takes to stop after SIGINT: start a run, let it train, send SIGINT,
and print the seconds until the process exited, over a few repetitions.

Each run starts in a session of its own; once a periodic checkpoint shows that it has trained
(steps > 0), it gets `--train-s` more seconds, then SIGINT. Per repetition the script prints the
seconds from the signal to the process's exit as seen from outside, the run's own figure (from the
signal to its workers stopped and its checkpoint written, read from its stderr), how many of the
run's processes were alive before the signal and at its exit (multiprocessing's resource tracker
outlives the run by a moment), and the seconds until none was left. `--busy-loops K` runs K
busy-looping processes beside it, for the figures on a loaded machine. Options it does not know go
to `python -m nalu_rl.train`.

  python scripts/measure_stop_latency.py --repeats 5
  python scripts/measure_stop_latency.py --repeats 5 --busy-loops 2
  python scripts/measure_stop_latency.py --repeats 3 --obs pixels --agent lstm
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.cli import CliError, one_line_errors, run_cli
from nalu_rl.errors import CheckpointError

# A short symbolic run with two actor processes, the shape of the runtime tests' run.
DEFAULT_TRAIN_OPTIONS = ["--agent", "nac", "--obs", "symbolic", "--actors", "2"]

# Options every measured run gets: a budget it never spends, a checkpoint each second (to see that
# it trains), no evaluation, no progress bar.
FIXED_TRAIN_OPTIONS = [
    "--total-steps", "1000000000", "--checkpoint-interval-s", "1", "--eval-episodes", "0", "--no-progress",
]  # fmt: skip

# How long to wait for a run's first checkpoint, or for its exit after SIGINT, before giving up.
PATIENCE_S = 300.0

RUN_OWN_FIGURE = re.compile(r"checkpoint written ([0-9.]+) s after SIGINT")


def live_group_members(group: int) -> list[int]:
    """Live (non-zombie) processes of process group `group` (a run started in a session of its own)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return []
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry))
    return members


def trained_steps(logdir: Path) -> int:
    """The steps in the run's latest checkpoint, 0 before it has one."""
    if not (logdir / "checkpoint.pt").exists():
        return 0
    try:
        return int(load_checkpoint(logdir)["steps"])
    except CheckpointError:
        return 0  # a checkpoint being replaced right now


def measure_once(train_options: list[str], train_s: float, folder: Path) -> dict[str, float | int | None]:
    """Start one run, SIGINT it `train_s` seconds after a checkpoint showed steps; return its figures."""
    stderr_path = folder / "stderr.txt"
    command = [sys.executable, "-m", "nalu_rl.train", *train_options, *FIXED_TRAIN_OPTIONS]
    command += ["--logdir", str(folder / "run")]
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    try:
        deadline = time.monotonic() + PATIENCE_S
        while not trained_steps(folder / "run"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise CliError(f"the run never trained; its stderr is in {stderr_path}")
            time.sleep(0.2)
        time.sleep(train_s)
        actors = len(live_group_members(process.pid)) - 1  # the run's children (resource tracker included)
        sent = time.perf_counter()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=PATIENCE_S)
        outside_s = time.perf_counter() - sent
        left_at_exit = len(live_group_members(process.pid))
        while live_group_members(process.pid) and time.perf_counter() - sent < PATIENCE_S:
            time.sleep(0.02)
        all_gone_s = time.perf_counter() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    own = RUN_OWN_FIGURE.search(stderr_path.read_text())
    return {
        "exit_code": process.returncode,
        "outside_s": outside_s,
        "own_s": float(own[1]) if own else None,
        "children_before": actors,
        "left_at_exit": left_at_exit,
        "all_gone_s": all_gone_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Every other option is passed to python -m nalu_rl.train (see its --help); without any, "
        + " ".join(DEFAULT_TRAIN_OPTIONS),
    )
    one_line_errors(parser)
    parser.add_argument("--repeats", type=int, default=5, help="runs to start and stop (default 5)")
    parser.add_argument(
        "--train-s",
        type=float,
        default=3.0,
        help="seconds of training after a checkpoint showed steps (default 3)",
    )
    parser.add_argument(
        "--busy-loops", type=int, default=0, help="busy-looping processes to run beside it (default 0)"
    )
    known, train_options = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if known.repeats < 1 or known.train_s < 0 or known.busy_loops < 0:
        raise CliError("--repeats must be at least 1, --train-s and --busy-loops not negative")
    train_options = train_options or DEFAULT_TRAIN_OPTIONS
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(known.busy_loops)]
    print(f"python -m nalu_rl.train {' '.join(train_options)}")
    print(f"SIGINT {known.train_s:g} s after a checkpoint with steps; {os.cpu_count()} cores, ", end="")
    print(f"load {os.getloadavg()[0]:.1f}, {known.busy_loops} busy loops beside")
    print("repeat  exit  signal->exit s  run's own s  children  left at exit  all gone s")
    figures = []
    try:
        for repeat in range(known.repeats):
            with tempfile.TemporaryDirectory(prefix="nalu_rl-stop-") as folder:
                figure = measure_once(train_options, known.train_s, Path(folder))
            figures.append(figure)
            own = "-" if figure["own_s"] is None else f"{figure['own_s']:.2f}"
            print(
                f"{repeat:>6}  {figure['exit_code']:>4}  {figure['outside_s']:>14.2f}  {own:>11}  "
                f"{figure['children_before']:>8}  {figure['left_at_exit']:>12}  "
                f"{figure['all_gone_s']:>10.2f}",
                flush=True,
            )
    finally:
        for process in busy:
            process.kill()
            process.wait()
    outside = [figure["outside_s"] for figure in figures]
    own_figures = [figure["own_s"] for figure in figures if figure["own_s"] is not None]
    print(f"signal->exit: median {statistics.median(outside):.2f} s, max {max(outside):.2f} s")
    gone = [figure["all_gone_s"] for figure in figures]
    print(f"all gone:     median {statistics.median(gone):.2f} s, max {max(gone):.2f} s")
    if own_figures:
        print(f"run's own:    median {statistics.median(own_figures):.2f} s, max {max(own_figures):.2f} s")
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    run_cli(main)
