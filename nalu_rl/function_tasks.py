"""The simple function tasks of Trask et al. (2018), section 4.1, and the two-layer models compared on
them: a and b are sums of the inputs over two overlapping subsets (over the steps so far, for the
recurrent task), the target a op b. scripts/bench_arithmetic.py trains and scores them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from nalu_rl.units import NAC, NALU, NAU, NMU, RecurrentUnit, total_regularizer

NEAR_PERFECT_EPS = 1e-5
OPERATIONS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
}
MODELS = ("mlp", "nac", "nalu", "nau/nmu")


@dataclass(frozen=True)
class Task:
    """One task's input size and the sizes of the two subsets summed into a and b."""

    name: str
    input_features: int
    subset_size: int
    subset_overlap: int

    @property
    def recurrent(self) -> bool:
        return self.name == "recurrent"


TASKS = {"static": Task("static", 100, 25, 12), "recurrent": Task("recurrent", 10, 3, 1)}


def input_ranges(
    task: Task, operation: str, recurrent_range: tuple[float, float] | None = None
) -> dict[str, tuple[float, float]]:
    """The uniform input range of the training, interpolation and extrapolation data
    (`recurrent_range` replaces the recurrent task's default range for every operation)."""
    if not task.recurrent:
        return {"train": (1.0, 2.0), "interpolation": (1.0, 2.0), "extrapolation": (2.0, 6.0)}
    low, high = (-1.0, 1.0) if operation in ("add", "sub") else (1.0, 2.0)
    if recurrent_range is not None:
        low, high = recurrent_range
    return dict.fromkeys(("train", "interpolation", "extrapolation"), (low, high))


def subset_masks(task: Task, seeds: int, generator: torch.Generator) -> Tensor:
    """Per seed, the 0/1 masks [seeds, 2, features] of the two overlapping subsets that make a and b."""
    masks = torch.zeros(seeds, 2, task.input_features)
    for seed in range(seeds):
        order = torch.randperm(task.input_features, generator=generator)
        start_b = task.subset_size - task.subset_overlap
        masks[seed, 0, order[: task.subset_size]] = 1.0
        masks[seed, 1, order[start_b : start_b + task.subset_size]] = 1.0
    return masks


def subset_sums(x: Tensor, masks: Tensor) -> tuple[Tensor, Tensor]:
    """a and b for inputs x [seeds, batch, features] -> [seeds, batch], or for sequences
    [seeds, steps, batch, features] -> running sums over the steps so far [seeds, steps, batch]."""
    summed = x.cumsum(1) if x.dim() == 4 else x
    ab = summed @ masks.transpose(-1, -2).unsqueeze(1) if x.dim() == 4 else summed @ masks.transpose(-1, -2)
    return ab[..., 0], ab[..., 1]


def near_perfect_mse(operation: str, x: Tensor, masks: Tensor) -> Tensor:
    """Per seed, the MSE (after the last step for sequences) of the exact solution with every weight
    shifted by +eps, the state's feedback included (float64)."""
    x, masks = x.double(), masks.double()
    eps = NEAR_PERFECT_EPS
    shifted = masks + eps
    if x.dim() == 4:  # h_t = (I + eps) h_{t-1} + (masks + eps) x_t: the recurrence is off by eps too
        feedback = torch.eye(2, dtype=torch.float64) + eps
        h = x.new_zeros(x.shape[0], x.shape[2], 2)
        for t in range(x.shape[1]):
            h = h @ feedback.T + x[:, t] @ shifted.transpose(-1, -2)
        a_eps, b_eps = h[..., 0], h[..., 1]
        a, b = (s[:, -1] for s in subset_sums(x, masks))
    else:
        a_eps, b_eps = subset_sums(x, shifted)
        a, b = subset_sums(x, masks)
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
        h, outputs = h0, []
        for x in x_seq:
            h = torch.relu(self.linear(torch.cat([x, h], dim=-1)))
            outputs.append(h)
        return torch.stack(outputs), h


class SequenceModel(nn.Module):
    """A recurrent cell over the sequence, then a read-out layer on its state after every step."""

    def __init__(self, cell: nn.Module, head: nn.Module, state_features: int) -> None:
        super().__init__()
        self.cell, self.head, self.state_features = cell, head, state_features

    def forward(self, x_seq: Tensor) -> Tensor:
        h0 = x_seq.new_zeros(x_seq.shape[1], self.state_features)
        outputs, _ = self.cell(x_seq, h0)
        return self.head(outputs)


class WithRegularizer(nn.Module):
    """Returns the model's output and the sum of its units' regularisers, for one functional call."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.model(x), total_regularizer(self.model)


def build_model(
    name: str, operation: str, task: Task, nalu_options: dict[str, float] | None = None
) -> nn.Module | None:
    """The two-layer model `name` for the task, or None when it has no unit for the operation;
    `nalu_options` (eps, max_exponent) go to every NALU."""
    features = task.input_features
    if name == "mlp":
        if task.recurrent:
            return SequenceModel(ReluRNN(features, 16), nn.Linear(16, 1), 16)
        return nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, 1))
    if name == "nau/nmu":
        if operation == "div":
            return None
        first, second = "nau", (NMU if operation == "mul" else NAU)
    else:
        first, second = name, {"nac": NAC, "nalu": NALU}[name]
    options = (nalu_options or {}) if name == "nalu" else {}
    if task.recurrent:
        return SequenceModel(RecurrentUnit(first, features, 2, **options), second(2, 1, **options), 2)
    first_class = {"nac": NAC, "nalu": NALU, "nau": NAU}[first]
    return nn.Sequential(first_class(features, 2, **options), second(2, 1, **options))


def clamp_ranges(model: nn.Module) -> dict[str, tuple[float, float]]:
    """The raw-parameter names of the NAU / NMU weights in `model` and the range each is clamped to."""
    ranges = {}
    for prefix, module in model.named_modules():
        if isinstance(module, (NAU, NMU)):
            ranges[f"{prefix}.W" if prefix else "W"] = (-1.0, 1.0) if isinstance(module, NAU) else (0.0, 1.0)
    return ranges


def draw_inputs(
    task: Task, seeds: int, batch: int, value_range: tuple[float, float], steps: int, generator
) -> Tensor:
    """Inputs [seeds, batch, features] (static) or sequences [seeds, steps, batch, features], uniform."""
    low, high = value_range
    features = task.input_features
    shape = (seeds, steps, batch, features) if task.recurrent else (seeds, batch, features)
    return torch.rand(shape, generator=generator) * (high - low) + low
