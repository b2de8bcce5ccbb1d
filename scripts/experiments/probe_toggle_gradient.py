"""Makes docs/journal/2026-12-07-count-student.md, "Why the toggles never fire: the gradient at the cues".

For a count-student checkpoint with toggled phase bits (`count_student_variants`): ReadySetGo episodes
written by hand ("ready" at step 0, "set" at T, the press due at 2T; no press taken), run through the
model with gradients; the imitation loss is backpropagated, and for each phase gate the mean
pre-activation and the mean gradient of the loss on it are printed at the "ready" step, the "set"
step and the steps without a cue. A negative gradient raises the pre-activation under gradient
descent (towards firing):

    cd scripts/experiments && python probe_toggle_gradient.py RUN/checkpoint.pt
"""

from __future__ import annotations

import argparse

import count_student_variants  # noqa: F401  (registers the agents the checkpoint names)
import torch

from nalu_rl.checkpoint import load_agent
from nalu_rl.cli import run_cli
from nalu_rl.errors import InputError


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    parser.add_argument("checkpoint", help="a checkpoint of a count_student_variants agent with toggles")
    path = parser.parse_args(argv).checkpoint
    model, _ = load_agent(path, allowed_imports=["count_student_variants"])
    model.train()
    delays = list(range(5, 13))
    length = 3 * max(delays) + 2
    cues = torch.zeros(length, len(delays), 2)
    mask = torch.zeros(length, len(delays))
    for column, delay in enumerate(delays):
        cues[0, column, 0] = 1.0
        cues[delay, column, 1] = 1.0
        mask[: 2 * delay + 1, column] = 1.0  # the steps up to the due press
    starts = torch.zeros(length, len(delays), dtype=torch.bool)
    starts[0] = True
    counter = model.cores["count"]
    model({"cues": cues}, starts, model.initial_state(len(delays)))
    pre_activations = counter.phase_gate._pre_activations
    if not pre_activations:
        raise InputError(f"{path}: its phase gates record no pre-activations (toggles that bypass the gate)")
    for pre_activation in pre_activations:
        pre_activation.retain_grad()
    model.auxiliary_loss(mask).backward()
    stacked = torch.stack(pre_activations)  # [T, B, bits]
    gradients = torch.stack([pre_activation.grad for pre_activation in pre_activations])
    kinds = torch.zeros(length, len(delays), dtype=torch.long)  # 0 blank, 1 ready, 2 set
    kinds[0] = 1
    for column, delay in enumerate(delays):
        kinds[delay, column] = 2
    print(
        f"{path}: the phase gates' pre-activation and the imitation loss's gradient on it, to the due press"
    )
    print("| step | bit | pre-activation, mean | gradient, mean |")
    print("|---|---|---|---|")
    for kind, name in enumerate(("no cue", "ready", "set")):
        where = (kinds == kind) & (mask > 0)
        for bit in range(stacked.shape[-1]):
            values, grads = stacked[..., bit][where], gradients[..., bit][where]
            print(f"| {name} | {bit} | {values.mean():.3f} | {grads.mean():.2e} |")


if __name__ == "__main__":
    run_cli(main)
