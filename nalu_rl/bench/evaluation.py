"""A benchmark trial's evaluation: the model a finished train run kept, played at the protocol's
delays on the evaluation seed, written as the trial's per-seed CSV."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.bench.protocol import Protocol, evaluation_seed
from nalu_rl.errors import InputError

BEST_CHECKPOINT = "best.pt"
LAST_CHECKPOINT = "checkpoint.pt"


def kept_checkpoint(run_folder: str | Path) -> Path:
    """The checkpoint a trial is judged by: `best.pt` (the run's best recent training-range success)
    where the run wrote one, else its last `checkpoint.pt`; InputError when it has neither."""
    run_folder = Path(run_folder)
    for name in (BEST_CHECKPOINT, LAST_CHECKPOINT):
        if (run_folder / name).is_file():
            return run_folder / name
    raise InputError(f"{run_folder} holds no checkpoint to evaluate")


def evaluate_trial(
    run_folder: str | Path,
    out_csv: str | Path,
    protocol: Protocol,
    training_seed: int,
    allowed_imports: Sequence[str] = (),
) -> Path:
    """Evaluate the kept checkpoint of `run_folder` at every delay of `protocol`, `protocol.episodes`
    episodes each, actions sampled, seed `evaluation_seed(training_seed)`; write the CSV atomically
    to `out_csv` and return its path."""
    from nalu_rl.checkpoint import load_agent
    from nalu_rl.evaluation import success_by_delay, write_success_csv

    model, config = load_agent(kept_checkpoint(run_folder), allowed_imports=allowed_imports)
    results = success_by_delay(
        model,
        config,
        protocol.delays,
        episodes=protocol.episodes,
        seed=evaluation_seed(training_seed),
        label=str(config["agent"]),
    )
    out_csv = Path(out_csv)
    partial = out_csv.with_name(out_csv.name + ".partial")
    write_success_csv(results, partial)
    os.replace(partial, out_csv)
    return out_csv
