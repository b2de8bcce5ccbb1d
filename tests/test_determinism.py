"""One process (`--actors 0`), one seed, one config: the same run, bit for bit."""

from __future__ import annotations

from pathlib import Path

import torch

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.runtime.run import TrainingRun

# A short symbolic run of the NAC agent in one process: 8 updates of 2 x 64 envs x 20 steps.
SHORT_NAC_RUN = [
    "--agent", "nac", "--obs", "symbolic", "--actors", "0", "--total-steps", "20000",
    "--eval-episodes", "0", "--no-progress",
]  # fmt: skip

# signed-count, whose regulariser is gated, with its gate opened early (a small window, a low gate),
# so that the gate's opening step and the regulariser's ramp are part of what must repeat.
SHORT_GATED_RUN = [
    "--agent", "signed-count", "--obs", "symbolic", "--actors", "0", "--total-steps", "20000",
    "--success-window", "300", "--regularizer-gate-success", "0.01", "--eval-episodes", "0", "--no-progress",
]  # fmt: skip


def train_and_load(argv: list[str], logdir: Path) -> tuple[TrainingRun, dict]:
    run = train.run_training([*argv, "--logdir", str(logdir)])
    return run, load_checkpoint(logdir)


def differing_tensors(first: dict, second: dict) -> list[str]:
    """Names of the model and optimizer-state tensors that are not bit-identical in two checkpoints."""
    names = [name for name in first["model"] if not torch.equal(first["model"][name], second["model"][name])]
    first_state, second_state = first["optimizer"]["state"], second["optimizer"]["state"]
    assert first_state.keys() == second_state.keys()
    for index, state in first_state.items():
        other = second_state[index]
        names += [f"optimizer.{index}.{key}" for key in state if not torch.equal(state[key], other[key])]
    return names


def episode_statistics(run: TrainingRun) -> dict:
    """What a run counted: steps, updates, episodes, the recent window, the last update's losses."""
    return {
        "steps": run.steps,
        "updates": run.updates,
        "episodes": run.counters.episodes,
        "success_rate": run.window.success_rate(),
        "mean_return": run.window.mean_return(),
        "success_by_delay": run.window.success_rate_by_delay(),
        "last_metrics": run.last_metrics,
        "regularizer_opened_at": run.regularizer_opened_at,
    }


def test_one_process_run_repeats_bit_for_bit_and_another_seed_does_not(tmp_path: Path) -> None:
    first_run, first = train_and_load([*SHORT_NAC_RUN, "--seed", "1"], tmp_path / "first")
    again_run, again = train_and_load([*SHORT_NAC_RUN, "--seed", "1"], tmp_path / "again")
    assert first_run.updates >= 8 and first_run.counters.episodes > 0
    assert differing_tensors(first, again) == []
    assert (first["steps"], first["updates"]) == (again["steps"], again["updates"])
    assert episode_statistics(first_run) == episode_statistics(again_run)
    # The comparison can fail: another seed trains other weights.
    _, other = train_and_load([*SHORT_NAC_RUN, "--seed", "2"], tmp_path / "other")
    assert set(first["model"]) <= set(differing_tensors(first, other))


def test_the_gated_default_agent_repeats_bit_for_bit_through_its_gate(tmp_path: Path) -> None:
    first_run, first = train_and_load(SHORT_GATED_RUN, tmp_path / "first")
    again_run, again = train_and_load(SHORT_GATED_RUN, tmp_path / "again")
    assert 0 < first_run.regularizer_opened_at < first_run.steps  # the gate opened during the run
    assert first_run.last_metrics["loss/regularizer_weight"] > 0
    assert differing_tensors(first, again) == []
    assert first["regularizer_opened_at"] == again["regularizer_opened_at"]
    assert episode_statistics(first_run) == episode_statistics(again_run)
