"""Benchmark the arithmetic units on the simple function tasks of Trask et al. (2018), section 4.1.

Static task: x in R^100; a and b are the sums of x over two fixed random subsets of 25 inputs that
share 12 (drawn per seed); the target is y = a + b, a - b, a * b or a / b. Training inputs are
drawn from U[1, 2] (interpolation), the extrapolation test from U[2, 6].

Recurrent task: sequences x_1 .. x_T in R^10; a_t and b_t are the sums of the inputs over two fixed
random subsets of 3 inputs that share 1, summed over the steps 1 .. t; the target at step t is
a_t op b_t. Training sequences have 10 steps and every step carries its target (so every prefix
length 1 .. 10 is trained); the tests read the target after the last step of 10-step
(interpolation) and 1000-step (extrapolation) sequences. Inputs: U[-1, 1] for + and -, U[1, 2] for
* and / (positive operands; a / b needs b away from 0).

Why the recurrent task is set up this way: with a single target after exactly 10 steps and inputs
from U[1, 2], a + b is nearly constant (std 1% of its mean), and every model fitted it with a
leaky recurrence that scales the current input level instead of counting; nothing pushed the
state's feedback towards 1. A target at every step rules that out (the sum must grow by the right
amount at each step), and zero-mean inputs make the subset weights identifiable instead of
dominated by the common mean.

Models, each two layers deep with 2 hidden units (the MLP: 16):
  mlp      Linear-ReLU-Linear (static); a ReLU RNN cell and a linear read-out (recurrent)
  nac      NAC -> NAC (static); recurrent NAC cell h_t = NAC([x_t, h_{t-1}]) -> NAC
  nalu     NALU -> NALU; recurrent NALU cell -> NALU
  nau/nmu  NAU -> NAU for + and -, NAU -> NMU for *; no unit for / (left out)

Training: MSE, Adam with a small beta2 (the late, tiny gradients of a NAC weight near +-1 are not
divided by the large early ones), the learning rate constant for the first half and then decayed
exponentially to a small fraction of its start (a NAC weight must first travel far out on tanh and
sigmoid; the last digits of a weight that must be exactly 1 need small steps), optional per-seed
gradient clipping, the NAU / NMU sparsity regulariser (by default at a constant weight from the
first step) and their weights clamped after each step.

All seeds of one (task, op, model) train together as one vectorised ensemble (torch.func.vmap
over stacked parameters), which is the same as training each seed alone (Adam and the clipping
act per seed). Printed per cell: median raw MSE over seeds (interpolation, extrapolation), the
median of the normalised extrapolation error (100 = the same model untrained, as in the paper's
Table 1), and the success count: extrapolation MSE below that of a near-perfect solution (every
weight of the exact solution, the recurrence included, shifted by eps = 1e-5), in the spirit of
Madsen & Johansen (2020), and a looser count: extrapolation RMS error below 1% of the RMS target
("rms<1%"). For the NALU, `--nalu-gates` also prints per seed the normalised extrapolation error
and the mean weight 1 - g of the multiplicative path of each unit, untrained (on interpolation
inputs) and trained (on extrapolation inputs).

Usage: taskset -c 0 python scripts/bench_arithmetic.py [--seeds 10] [--tasks static] ...
"""

from __future__ import annotations

import argparse
import copy
import math
import time

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from nalu_rl import NALU, regularizer_scale
from nalu_rl.function_tasks import (
    MODELS,
    OPERATIONS,
    TASKS,
    Task,
    WithRegularizer,
    build_model,
    clamp_ranges,
    draw_inputs,
    input_ranges,
    near_perfect_mse,
    subset_masks,
    subset_sums,
)


def clip_per_seed_(gradients: list[Tensor], max_norm: float) -> None:
    """Scale each seed's gradient (dim 0 of every stacked tensor) to a global norm of at most max_norm."""
    squared = sum(g.flatten(1).pow(2).sum(1) for g in gradients)
    scale = (max_norm / (squared.sqrt() + 1e-12)).clamp(max=1.0)
    for g in gradients:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))


def nalu_multiplicative_weights(model: nn.Module, x: Tensor) -> list[list[float]]:
    """For one trained model, per NALU layer and output unit, the mean 1 - g (the multiplicative
    path's share of the output) on the inputs x."""
    shares: dict[str, list[Tensor]] = {}
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, NALU):

            def record(unit: nn.Module, inputs: tuple[Tensor], output: Tensor, name: str = name) -> None:
                gate = unit.gate(inputs[0])
                shares.setdefault(name, []).append((1 - gate).flatten(0, -2).mean(0))

            handles.append(module.register_forward_hook(record))
    with torch.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return [torch.stack(values).mean(0).tolist() for values in shares.values()]


def format_shares(shares: list[list[float]]) -> str:
    """Per-layer gate shares as "0.5 0.3 | 1", layers separated by bars."""
    return " | ".join(" ".join(f"{share:.2g}" for share in layer) for layer in shares)


def run_cell(args, task: Task, operation: str, model_name: str) -> dict | None:
    """Train `seeds` copies of one model on one task and operation; their errors and success count."""
    models = []
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        model = build_model(
            model_name, operation, task, {"eps": args.nalu_eps, "max_exponent": args.nalu_max_exponent}
        )
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
    masks = subset_masks(task, args.seeds, generator)
    op = OPERATIONS[operation]
    value_ranges = input_ranges(task, operation, args.recurrent_input_range)
    train_length = args.recurrent_train_length
    tests = {
        "interpolation": draw_inputs(
            task, args.seeds, args.test_batch, value_ranges["interpolation"], train_length, generator
        ),
        "extrapolation": draw_inputs(
            task,
            args.seeds,
            args.test_batch // 8 if task.recurrent else args.test_batch,
            value_ranges["extrapolation"],
            args.recurrent_test_length,
            generator,
        ),
    }

    def final_target(x: Tensor) -> Tensor:
        a, b = subset_sums(x.double(), masks.double())
        return op(a[:, -1], b[:, -1]) if task.recurrent else op(a, b)

    def mse(x: Tensor) -> Tensor:
        with torch.no_grad():
            output, _ = ensemble(params, buffers, x)
        output = output[:, -1, :, 0] if task.recurrent else output[..., 0]
        error = (output.double() - final_target(x)).pow(2).flatten(1).mean(1)
        return torch.nan_to_num(error, nan=math.inf, posinf=math.inf)

    untrained_extrapolation = mse(tests["extrapolation"])
    report_gates = model_name == "nalu" and args.nalu_gates
    initial_shares = [
        nalu_multiplicative_weights(models[seed].model, tests["interpolation"][seed])
        for seed in range(args.seeds if report_gates else 0)
    ]
    optimizer = torch.optim.Adam(params.values(), lr=args.lr, betas=(0.9, args.beta2))
    steps = args.recurrent_steps if task.recurrent else args.static_steps
    decay_start = int(args.decay_start * steps)

    def lr_factor(step: int) -> float:
        return args.final_lr_fraction ** (max(step - decay_start, 0) / max(steps - decay_start, 1))

    decay = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    started = time.perf_counter()
    for step in range(steps):
        x = draw_inputs(task, args.seeds, args.batch, value_ranges["train"], train_length, generator)
        a, b = subset_sums(x, masks)
        output, regularizer = ensemble(params, buffers, x)
        # Per seed: the mean over the batch (and, for sequences, over every step's target).
        loss = (output[..., 0] - op(a, b)).pow(2).flatten(1).mean(1).sum()
        scale = regularizer_scale(
            step, int(args.regularizer_start * steps), int(args.regularizer_end * steps), args.regularizer
        )
        loss = loss + scale * regularizer.sum()
        optimizer.zero_grad()
        loss.backward()
        if args.clip > 0:
            clip_per_seed_([p.grad for p in params.values() if p.grad is not None], args.clip)
        optimizer.step()
        decay.step()
        with torch.no_grad():
            for name, (low, high) in ranges.items():
                params[name].clamp_(low, high)
    seconds = time.perf_counter() - started
    interpolation, extrapolation = mse(tests["interpolation"]), mse(tests["extrapolation"])
    threshold = near_perfect_mse(operation, tests["extrapolation"], masks)
    result = {
        "interpolation": interpolation,
        "extrapolation": extrapolation,
        "normalised": 100 * extrapolation / untrained_extrapolation,
        "successes": int((extrapolation < threshold).sum()),
        "within_1_percent": int(
            (extrapolation < 1e-4 * final_target(tests["extrapolation"]).pow(2).flatten(1).mean(1)).sum()
        ),
        "seconds": seconds,
    }
    if report_gates:
        result["multiplicative_share"] = []
        for seed in range(args.seeds):
            trained = models[seed].model
            trained.load_state_dict({name[len("model.") :]: value[seed] for name, value in params.items()})
            shares = nalu_multiplicative_weights(trained, tests["extrapolation"][seed])
            result["multiplicative_share"].append((initial_shares[seed], shares))
    return result


def main() -> None:
    """Run the benchmark and print one table row per (task, operation, model)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds per cell")
    parser.add_argument("--static-steps", type=int, default=3000, help="training iterations, static task")
    parser.add_argument("--recurrent-steps", type=int, default=4000, help="training iterations, recurrent")
    parser.add_argument("--batch", type=int, default=64, help="training batch size")
    parser.add_argument(
        "--test-batch", type=int, default=1024, help="test samples per seed (1000-step sequences: / 8)"
    )
    parser.add_argument("--lr", type=float, default=0.05, help="Adam learning rate at the start")
    parser.add_argument(
        "--final-lr-fraction", type=float, default=1e-3, help="lr decays exponentially to lr * this"
    )
    parser.add_argument(
        "--decay-start", type=float, default=0.5, help="fraction of training where the lr decay starts"
    )
    parser.add_argument("--beta2", type=float, default=0.9, help="Adam second-moment decay")
    parser.add_argument("--clip", type=float, default=0.0, help="per-seed gradient norm clip (0: none)")
    parser.add_argument("--regularizer", type=float, default=0.1, help="NAU / NMU sparsity weight (max)")
    parser.add_argument(
        "--regularizer-start", type=float, default=0.0, help="fraction of training where its warm-up starts"
    )
    parser.add_argument(
        "--regularizer-end", type=float, default=0.0, help="fraction of training where it reaches its max"
    )
    parser.add_argument("--recurrent-train-length", type=int, default=10)
    parser.add_argument("--recurrent-test-length", type=int, default=1000)
    parser.add_argument(
        "--recurrent-input-range",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="recurrent inputs from U[LOW, HIGH] for every op (default: U[-1, 1] for + -, U[1, 2] for * /)",
    )
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--ops", nargs="+", default=list(OPERATIONS), choices=list(OPERATIONS))
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument(
        "--nalu-gates", action="store_true", help="print per seed the NALU's multiplicative share (1 - g)"
    )
    parser.add_argument("--nalu-eps", type=float, default=1e-7, help="NALU eps in log(|x| + eps)")
    parser.add_argument(
        "--nalu-max-exponent", type=float, default=30.0, help="NALU clamp of the multiplicative exponent"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"seeds={args.seeds} static_steps={args.static_steps} recurrent_steps={args.recurrent_steps} "
        f"batch={args.batch} lr={args.lr} final_lr_fraction={args.final_lr_fraction} "
        f"decay_start={args.decay_start} beta2={args.beta2} "
        f"clip={args.clip} regularizer={args.regularizer} nalu_eps={args.nalu_eps} "
        f"nalu_max_exponent={args.nalu_max_exponent} "
        f"(warm-up {args.regularizer_start}-{args.regularizer_end} of training)"
    )
    header = "task       op   model    interp_mse  extrap_mse  extrap_norm  success  rms<1%  seconds"
    print(header)
    started = time.perf_counter()
    for task_name in args.tasks:
        for operation in args.ops:
            for model_name in args.models:
                result = run_cell(args, TASKS[task_name], operation, model_name)
                if result is None:
                    missing = "(no unit for this operation)"
                    print(f"{task_name:<10} {operation:<4} {model_name:<8} {missing:>40}")
                    continue
                print(
                    f"{task_name:<10} {operation:<4} {model_name:<8} "
                    f"{result['interpolation'].median().item():>10.3g}  "
                    f"{result['extrapolation'].median().item():>10.3g}  "
                    f"{result['normalised'].median().item():>11.3g}  "
                    f"{result['successes']:>4}/{args.seeds:<2}  "
                    f"{result['within_1_percent']:>3}/{args.seeds:<2}  "
                    f"{result['seconds']:>7.1f}",
                    flush=True,
                )
                for seed, (initial, trained) in enumerate(result.get("multiplicative_share", [])):
                    print(
                        f"    seed {seed}: extrap_norm {result['normalised'][seed].item():.3g}, "
                        f"1 - g per layer and unit: untrained {format_shares(initial)}, "
                        f"trained {format_shares(trained)}"
                    )
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
