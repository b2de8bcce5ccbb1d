"""Benchmark the arithmetic units on the simple function tasks of Trask et al. (2018), section 4.1.

Static task: x in R^100; a and b are the sums of x over two fixed random subsets of 25 inputs that
share 12 (drawn per seed); the target is y = a + b, a - b, a * b or a / b. Training inputs are
drawn from U[1, 2] (interpolation), the extrapolation test from U[2, 6].
Recurrent task: a sequence of such x_t; a and b are sums over the subsets and over all time
steps, and y = a op b is read after the last step. Training sequences have 10 steps; the
interpolation test uses 10 steps, the extrapolation test 1000 (inputs from U[1, 2] throughout).

Models, each two layers deep with 2 hidden units (the MLP: 16):
  mlp      Linear-ReLU-Linear (static); a ReLU RNN cell and a linear read-out (recurrent)
  nac      NAC -> NAC (static); recurrent NAC cell -> NAC
  nalu     NALU -> NALU; recurrent NALU cell -> NALU
  nau/nmu  NAU -> NAU for + and -, NAU -> NMU for *; no unit for / (left out)

All seeds of one (task, op, model) train together as one vectorised ensemble (torch.func.vmap
over stacked parameters), which is the same as training each seed alone (Adam acts per element).
Printed per cell: median raw MSE over seeds (interpolation, extrapolation), the median of the
normalised extrapolation error (100 = the same model untrained, as in the paper's Table 1), and
the success count: extrapolation MSE below that of a near-perfect solution (every weight of the
exact two-layer solution shifted by eps = 1e-5), in the spirit of Madsen & Johansen (2020), and a
looser count: extrapolation RMS error below 1% of the RMS target ("rms<1%").

Usage: taskset -c 0 python scripts/bench_arithmetic.py [--seeds 10] [--static-steps N] ...
"""

from __future__ import annotations

import argparse
import copy
import math
import time
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from nalu_rl import NAC, NALU, NAU, NMU, RecurrentUnit, regularizer_scale, total_regularizer

INPUT_FEATURES = 100
SUBSET_SIZE = 25
SUBSET_OVERLAP = 12
NEAR_PERFECT_EPS = 1e-5
OPERATIONS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
}
MODELS = ("mlp", "nac", "nalu", "nau/nmu")


def subset_masks(seeds: int, generator: torch.Generator) -> Tensor:
    """Per seed, the 0/1 masks [seeds, 2, 100] of the two overlapping subsets that make a and b."""
    masks = torch.zeros(seeds, 2, INPUT_FEATURES)
    for seed in range(seeds):
        order = torch.randperm(INPUT_FEATURES, generator=generator)
        start_b = SUBSET_SIZE - SUBSET_OVERLAP
        masks[seed, 0, order[:SUBSET_SIZE]] = 1.0
        masks[seed, 1, order[start_b : start_b + SUBSET_SIZE]] = 1.0
    return masks


def subset_sums(x: Tensor, masks: Tensor) -> tuple[Tensor, Tensor]:
    """a and b for inputs x [seeds, ..., 100] (sums over every axis between seeds and features)."""
    summed = x.sum(1) if x.dim() == 4 else x  # sequences [S, T, B, 100] -> [S, B, 100]
    ab = torch.einsum("sbi,ski->sbk", summed, masks)
    return ab[..., 0], ab[..., 1]


def near_perfect_mse(operation: str, x: Tensor, masks: Tensor) -> Tensor:
    """Per seed, the MSE of the exact two-layer solution with every weight shifted by +eps (float64)."""
    x, masks = x.double(), masks.double()
    a, b = subset_sums(x, masks)
    eps = NEAR_PERFECT_EPS
    a_eps, b_eps = subset_sums(x, masks + eps)
    if operation in ("add", "sub"):
        sign = 1.0 if operation == "add" else -1.0
        y_eps = (1 + eps) * a_eps + (sign + eps) * b_eps
    elif operation == "mul":  # NMU form: prod (w z + 1 - w) with w = 1 + eps
        y_eps = ((1 + eps) * a_eps - eps) * ((1 + eps) * b_eps - eps)
    else:  # NALU form: exp(w . log z) with w = (1 + eps, -1 + eps)
        y_eps = torch.exp((1 + eps) * torch.log(a_eps) + (-1 + eps) * torch.log(b_eps))
    return (y_eps - OPERATIONS[operation](a, b)).pow(2).flatten(1).mean(1)


class ReluRNN(nn.Module):
    """h_t = relu(W [x_t, h_{t-1}] + c): the recurrent form of the MLP baseline."""

    def __init__(self, input_features: int, state_features: int) -> None:
        super().__init__()
        self.state_features = state_features
        self.linear = nn.Linear(input_features + state_features, state_features)

    def forward(self, x_seq: Tensor, h0: Tensor) -> tuple[Tensor, Tensor]:
        h = h0
        for x in x_seq:
            h = torch.relu(self.linear(torch.cat([x, h], dim=-1)))
        return h, h


class SequenceModel(nn.Module):
    """A recurrent cell over the sequence, then a read-out layer on its last state."""

    def __init__(self, cell: nn.Module, head: nn.Module, state_features: int) -> None:
        super().__init__()
        self.cell, self.head, self.state_features = cell, head, state_features

    def forward(self, x_seq: Tensor) -> Tensor:
        h0 = x_seq.new_zeros(x_seq.shape[1], self.state_features)
        _, h_last = self.cell(x_seq, h0)
        return self.head(h_last)


class WithRegularizer(nn.Module):
    """Returns the model's output and the sum of its units' regularisers, for one functional call."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.model(x), total_regularizer(self.model)


def build_model(name: str, operation: str, recurrent: bool) -> nn.Module | None:
    """The two-layer model `name` for the task, or None when it has no unit for the operation."""
    if name == "mlp":
        if recurrent:
            return SequenceModel(ReluRNN(INPUT_FEATURES, 16), nn.Linear(16, 1), 16)
        return nn.Sequential(nn.Linear(INPUT_FEATURES, 16), nn.ReLU(), nn.Linear(16, 1))
    if name == "nau/nmu":
        if operation == "div":
            return None
        first, second = "nau", (NMU if operation == "mul" else NAU)
    else:
        first, second = name, {"nac": NAC, "nalu": NALU}[name]
    if recurrent:
        return SequenceModel(RecurrentUnit(first, INPUT_FEATURES, 2), second(2, 1), 2)
    first_class = {"nac": NAC, "nalu": NALU, "nau": NAU}[first]
    return nn.Sequential(first_class(INPUT_FEATURES, 2), second(2, 1))


def clamp_ranges(model: nn.Module) -> dict[str, tuple[float, float]]:
    """The raw-parameter names of the NAU / NMU weights in `model` and the range each is clamped to."""
    ranges = {}
    for prefix, module in model.named_modules():
        if isinstance(module, (NAU, NMU)):
            ranges[f"{prefix}.W" if prefix else "W"] = (-1.0, 1.0) if isinstance(module, NAU) else (0.0, 1.0)
    return ranges


def draw_inputs(seeds: int, batch: int, low: float, high: float, steps: int | None, generator) -> Tensor:
    """Inputs [seeds, batch, 100], or sequences [seeds, steps, batch, 100], uniform on [low, high]."""
    shape = (seeds, batch, INPUT_FEATURES) if steps is None else (seeds, steps, batch, INPUT_FEATURES)
    return torch.rand(shape, generator=generator) * (high - low) + low


def run_cell(args, task: str, operation: str, model_name: str) -> dict | None:
    """Train `seeds` copies of one model on one task and operation; their errors and success count."""
    recurrent = task == "recurrent"
    models = []
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        model = build_model(model_name, operation, recurrent)
        if model is None:
            return None
        models.append(WithRegularizer(model))
    base = copy.deepcopy(models[0]).to("meta")
    params, buffers = stack_module_state(models)
    ranges = {f"model.{name}": bounds for name, bounds in clamp_ranges(models[0].model).items()}

    def call(p, b, x):
        return functional_call(base, (p, b), (x,))

    ensemble = vmap(call, in_dims=(0, 0, 0))
    generator = torch.Generator().manual_seed(1234)
    masks = subset_masks(args.seeds, generator)
    op = OPERATIONS[operation]
    train_steps = args.recurrent_train_length if recurrent else None
    tests = {
        "interpolation": draw_inputs(args.seeds, args.test_batch, 1.0, 2.0, train_steps, generator),
        "extrapolation": (
            draw_inputs(args.seeds, args.test_batch // 8, 1.0, 2.0, args.recurrent_test_length, generator)
            if recurrent
            else draw_inputs(args.seeds, args.test_batch, 2.0, 6.0, None, generator)
        ),
    }

    def mse(x: Tensor) -> Tensor:
        with torch.no_grad():
            output, _ = ensemble(params, buffers, x)
        a, b = subset_sums(x.double(), masks.double())
        error = (output[..., 0].double() - op(a, b)).pow(2).flatten(1).mean(1)
        return torch.nan_to_num(error, nan=math.inf, posinf=math.inf)

    def mean_square_target(x: Tensor) -> Tensor:
        a, b = subset_sums(x.double(), masks.double())
        return op(a, b).pow(2).flatten(1).mean(1)

    untrained_extrapolation = mse(tests["extrapolation"])
    optimizer = torch.optim.Adam(params.values(), lr=args.lr, betas=(0.9, args.beta2))
    steps = args.recurrent_steps if recurrent else args.static_steps
    started = time.perf_counter()
    for step in range(steps):
        x = draw_inputs(args.seeds, args.batch, 1.0, 2.0, train_steps, generator)
        a, b = subset_sums(x, masks)
        output, regularizer = ensemble(params, buffers, x)
        loss = (output[..., 0] - op(a, b)).pow(2).mean(1).sum()
        scale = regularizer_scale(step, int(0.3 * steps), int(0.6 * steps), args.regularizer)
        loss = loss + scale * regularizer.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for name, (low, high) in ranges.items():
                params[name].clamp_(low, high)
    seconds = time.perf_counter() - started
    interpolation, extrapolation = mse(tests["interpolation"]), mse(tests["extrapolation"])
    threshold = near_perfect_mse(operation, tests["extrapolation"], masks)
    return {
        "interpolation": interpolation,
        "extrapolation": extrapolation,
        "normalised": 100 * extrapolation / untrained_extrapolation,
        "successes": int((extrapolation < threshold).sum()),
        "within_1_percent": int((extrapolation < 1e-4 * mean_square_target(tests["extrapolation"])).sum()),
        "seconds": seconds,
    }


def main() -> None:
    """Run the benchmark and print one table row per (task, operation, model)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds per cell")
    parser.add_argument("--static-steps", type=int, default=3000, help="training iterations, static task")
    parser.add_argument("--recurrent-steps", type=int, default=1000, help="training iterations, recurrent")
    parser.add_argument("--batch", type=int, default=64, help="training batch size")
    parser.add_argument("--test-batch", type=int, default=1024, help="test samples per seed")
    parser.add_argument("--lr", type=float, default=0.05, help="Adam learning rate")
    parser.add_argument("--beta2", type=float, default=0.99, help="Adam second-moment decay")
    parser.add_argument("--regularizer", type=float, default=1.0, help="NAU / NMU sparsity weight (max)")
    parser.add_argument("--recurrent-train-length", type=int, default=10)
    parser.add_argument("--recurrent-test-length", type=int, default=1000)
    parser.add_argument(
        "--tasks", nargs="+", default=["static", "recurrent"], choices=["static", "recurrent"]
    )
    parser.add_argument("--ops", nargs="+", default=list(OPERATIONS), choices=list(OPERATIONS))
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"seeds={args.seeds} static_steps={args.static_steps} recurrent_steps={args.recurrent_steps} "
        f"batch={args.batch} lr={args.lr} beta2={args.beta2} regularizer={args.regularizer}"
    )
    header = "task       op   model    interp_mse  extrap_mse  extrap_norm  success  rms<1%  seconds"
    print(header)
    for task in args.tasks:
        for operation in args.ops:
            for model_name in args.models:
                result = run_cell(args, task, operation, model_name)
                if result is None:
                    print(f"{task:<10} {operation:<4} {model_name:<8} {'(no unit for this operation)':>40}")
                    continue
                print(
                    f"{task:<10} {operation:<4} {model_name:<8} "
                    f"{result['interpolation'].median().item():>10.3g}  "
                    f"{result['extrapolation'].median().item():>10.3g}  "
                    f"{result['normalised'].median().item():>11.3g}  "
                    f"{result['successes']:>4}/{args.seeds:<2}  "
                    f"{result['within_1_percent']:>3}/{args.seeds:<2}  "
                    f"{result['seconds']:>7.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
