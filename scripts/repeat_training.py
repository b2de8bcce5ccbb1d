"""Train the same options several times and print each run's recent success rate: how often a
short run (a learning test's, say) lands below a threshold. Runs with actor processes do not repeat
bit for bit (docs/TRAINING.md, "Determinism"), so a test built on one has a failure rate, and this
measures it. Options after `--` go to `python -m nalu_rl.train`; each run gets a fresh run folder.

  python scripts/repeat_training.py --repeats 8 --below 0.2 -- --agent lstm --obs symbolic \
      --size 3 --delay-range 2 3 --unroll-length 10 --batch-unrolls 1 --learning-rate 3e-3 \
      --success-window 300 --eval-episodes 0 --actors 2 --envs-per-actor 16 \
      --buffers-per-actor 1 --no-synchronous --total-steps 150000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=8, help="how many runs")
    parser.add_argument("--below", type=float, default=None, help="count runs below this success")
    parser.add_argument("train_options", nargs=argparse.REMAINDER, help="-- then train's options")
    args = parser.parse_args()
    options = [option for option in args.train_options if option != "--"]
    if "--logdir" in options:
        parser.error("--logdir is chosen per run; leave it out")

    from nalu_rl import train

    rates = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stderr(io.StringIO()):
            run = train.run_training([*options, "--no-progress", "--logdir", folder])
        rates.append(run.window.success_rate())
        lag = run.counters.max_policy_lag
        print(f"run {repeat + 1}: recent success {rates[-1]:.3f}, max policy lag {lag}", flush=True)
    if args.below is not None:
        below = sum(rate < args.below for rate in rates)
        print(f"{below} of {len(rates)} runs below {args.below}")


if __name__ == "__main__":
    main()
