"""Makes docs/journal/2026-12-02-results.md, "Policy lag and LSTM policies".

Train in one process, as `--actors 0` does, but act with the weights of `--lag` updates ago.

A probe of how policy lag alone affects learning, free of everything else that differs between
one process and actor processes (scheduling, shared memory, seeds). With `--lag 0` this is the
serial runtime. Every other option is a `python -m nalu_rl.train` option; the run folder is a
normal run folder (TensorBoard, checkpoint), though `--resume` does not restore the lag queue.

  python scripts/experiments/probe_policy_lag.py --lag 4 --agent lstm --obs pixels --actors 0 \
      --batch-unrolls 1 ...
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque

import torch

import nalu_rl.train
from nalu_rl.cli import CliError, one_line_errors, run_cli
from nalu_rl.runtime import training
from nalu_rl.runtime.actor import Actor, build_policy
from nalu_rl.runtime.learner import learn
from nalu_rl.runtime.rollout import RolloutBuffers, WeightStore
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.update import Learner


def _weights_copy(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {key: value.detach().cpu().clone() for key, value in model.state_dict().items()}


def train_serial_with_lag(run: TrainingRun, lag: int, fresh_state: bool) -> None:
    """The serial learner loop with an acting model `lag` published versions behind the learner.

    A copy of the serial branch of `nalu_rl.runtime.learner.train_learner` (which has no function of
    its own to call) with the lag added; it builds the buffers and the `Learner` with the same
    arguments, and steps with the library's `learn`.
    """
    import multiprocessing

    config = run.config
    acting_model = build_policy(config, run.model.wiring).eval()
    buffers = RolloutBuffers(
        acting_model.observation_space,
        acting_model.initial_state(config.envs_per_actor),
        config.unroll_length,
        config.envs_per_actor,
        config.batch_unrolls,
        shared=False,
        action_shape=acting_model.action_shape,
    )
    weights = WeightStore(run.model, multiprocessing.get_context("spawn"))
    learner = Learner(run.model, run.optimizer, config, run.reward_normalizer)
    snapshots: deque[tuple[int, dict]] = deque(maxlen=lag + 1)
    snapshots.append((weights.version, _weights_copy(run.model)))
    acting_model.load_state_dict(snapshots[0][1])
    actor = Actor(config, acting_model, config.envs_per_actor, run.next_seed())
    # With fresh_state the learner starts each unroll from a state computed by the learner's own
    # (latest) weights over the same observations, as in the serial runtime, while the actions
    # still come from the lagged weights: what is left is the off-policy gap of the actions.
    if fresh_state:
        state_model = build_policy(config, run.model.wiring).eval()
        state_model.load_state_dict(snapshots[0][1])
        fresh = state_model.initial_state(config.envs_per_actor)
    while not run.should_stop():
        started = time.perf_counter()
        for index in range(config.batch_unrolls):
            buffers.policy_versions[index] = snapshots[0][0]
            slot = buffers.slot(index)
            actor.unroll(slot)
            if fresh_state:
                for part, tensor in enumerate(fresh):
                    slot[f"state.{part}"].copy_(tensor)
                length = config.unroll_length
                obs = {key[4:]: value[:length] for key, value in slot.items() if key.startswith("obs.")}
                with torch.inference_mode():
                    _, _, fresh = state_model(obs, slot["episode_start"][:length], fresh)
        run.add_busy_time("actor", time.perf_counter() - started)
        learn(run, learner, buffers.batch(list(range(config.batch_unrolls))), weights)
        snapshots.append((weights.version, _weights_copy(run.model)))
        acting_model.load_state_dict(snapshots[0][1])
        if fresh_state:
            state_model.load_state_dict(snapshots[-1][1])


def main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Every other option is passed to python -m nalu_rl.train (see its --help).",
    )
    one_line_errors(parser)
    parser.add_argument("--lag", type=int, required=True, help="updates by which the acting weights trail")
    parser.add_argument(
        "--fresh-state",
        action="store_true",
        help="start the learner's unrolls from a state computed with its latest weights",
    )
    known, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if known.lag < 0:
        raise CliError(f"--lag must not be negative, got {known.lag}")
    training.RUNTIMES["learner"] = lambda run: train_serial_with_lag(run, known.lag, known.fresh_state)
    return nalu_rl.train.main(rest)


if __name__ == "__main__":
    run_cli(main)
