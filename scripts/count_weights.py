"""The count unit's weights of checkpoints: one Markdown row per checkpoint.

For each checkpoint file or run folder prints its steps, the effective weight of the counter's
arithmetic unit (as the forward pass uses it), whether every weight is
exactly -1 or +1, and the step at which the gated regulariser opened (--regularizer-gate-success).
    python scripts/count_weights.py runs/sweeps/signed-count-symbolic/*/checkpoint.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from nalu_rl.checkpoint import load_agent, load_checkpoint
from nalu_rl.errors import InputError
from nalu_rl.units import ArithmeticUnit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", nargs="+", type=Path, help="checkpoint files or run folders")
    args = parser.parse_args(argv)
    print("| checkpoint | steps | count weights | all at +-1 | gate opened at |")
    print("|---|---|---|---|---|")
    for path in args.checkpoint:
        try:
            payload = load_checkpoint(path)
            model, _ = load_agent(path)
        except (InputError, OSError) as error:
            print(f"error: {path}: {error}", file=sys.stderr)
            return 2
        unit = next((module for module in model.modules() if isinstance(module, ArithmeticUnit)), None)
        if unit is None:
            print(f"error: {path}: the agent has no arithmetic counter unit", file=sys.stderr)
            return 2
        with torch.no_grad():
            weight = unit.weight.flatten().tolist()
        exact = all(abs(value) == 1.0 for value in weight)
        opened = int(payload.get("regularizer_opened_at", -1))
        opened_text = f"{opened / 1e6:.2f}M" if opened > 0 else ("from the start" if opened == 0 else "never")
        shown = ", ".join(f"{value:.4f}" for value in weight)
        # A shipped checkpoint keeps weights and config only: no step count, no regulariser record.
        steps = f"{int(payload['steps']) / 1e6:.2f}M" if "steps" in payload else "-"
        print(f"| {path} | {steps} | [{shown}] | {'yes' if exact else 'no'} | {opened_text} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
