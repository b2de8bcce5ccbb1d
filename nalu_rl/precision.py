"""Numeric precision of the learner and the actors: `--precision {auto,fp32,bf16}`.

bf16 runs the model's matrix products and convolutions under `torch.autocast` with bfloat16;
the weights stay float32 (checkpoints are unchanged). What must stay exact stays float32 in
every mode: the arithmetic units and the counter state (bfloat16 holds integers exactly only up
to 256, so a count of T - t would be rounded beyond it), the recurrent state carried between
steps, and the loss, V-trace targets, values and log-probabilities.

`auto` picks what was measured faster: on a CPU, bf16 where it computes bfloat16 natively (flags
AMX or AVX-512 BF16) and fp32 elsewhere, where emulated bf16 is slower; on CUDA, fp32 (on an H200
the learner ran at 0.56x of fp32 under bf16 autocast: docs/PERFORMANCE.md, "The GPU check").
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import torch

PRECISIONS = ("auto", "fp32", "bf16")
# CPU flags (/proc/cpuinfo) of native bfloat16 arithmetic: AMX tiles, AVX-512 BF16 dot products.
NATIVE_BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")
CPUINFO_PATH = Path("/proc/cpuinfo")

Function = TypeVar("Function", bound=Callable[..., Any])


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The feature flags of this machine's CPU as /proc/cpuinfo lists them (empty where it cannot be read)."""
    try:
        text = CPUINFO_PATH.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


# Why `auto` is fp32 on CUDA: the one measurement there (docs/PERFORMANCE.md, "The GPU check").
CUDA_AUTO_REASON = "auto: fp32 on CUDA, where bf16 autocast measured 0.56x of fp32 (H200, learner)"


def native_bf16_reason(device_type: str) -> str | None:
    """Why a CPU computes bfloat16 natively (its flags), or None when it does not or for another device."""
    if device_type != "cpu":
        return None
    found = [flag for flag in NATIVE_BF16_CPU_FLAGS if flag in cpu_flags()]
    return f"CPU flags {', '.join(found)}" if found else None


def resolve_precision(requested: str, device: torch.device | str) -> tuple[str, str]:
    """The precision ("fp32" or "bf16") that `requested` means on `device`, and the reason, one phrase."""
    if requested not in PRECISIONS:
        raise ValueError(f"unknown precision {requested!r}; choose one of {', '.join(PRECISIONS)}")
    device_type = torch.device(device).type
    if requested != "auto":
        return requested, f"--precision {requested}"
    if device_type == "cuda":
        return "fp32", CUDA_AUTO_REASON
    native = native_bf16_reason(device_type)
    if native is not None:
        return "bf16", f"auto: {native}"
    return "fp32", f"auto: no native bfloat16 on this {device_type} (no {' or '.join(NATIVE_BF16_CPU_FLAGS)})"


def describe_choice(
    requested: str, learner_device: torch.device | str, actors_on_the_cpu: bool = True
) -> str:
    """One line for the start of a run: the learner's precision and why, and the actors' where they
    act on the CPU while the learner does not (the device runtime acts on the learner's device)."""
    learner, reason = resolve_precision(requested, learner_device)
    line = f"precision: {learner} ({reason})"
    if actors_on_the_cpu and torch.device(learner_device).type != "cpu":
        actors, actors_reason = resolve_precision(requested, "cpu")
        line += f"; actors on the CPU: {actors} ({actors_reason})"
    return line


@functools.cache
def _resolved(requested: str, device_type: str) -> str:
    return resolve_precision(requested, device_type)[0]


def autocast(precision: str, device: torch.device | str) -> contextlib.AbstractContextManager:
    """A context in which the model runs at `precision` (resolved for `device`): bf16 autocast, or
    nothing at fp32. Wrap the forward pass only; the backward and the loss run outside it."""
    device_type = torch.device(device).type
    if _resolved(precision, device_type) == "bf16":
        return torch.autocast(device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


@contextlib.contextmanager
def autocast_disabled(device_type: str) -> Iterator[None]:
    """A block computed in the tensors' own dtype: autocast is off inside it."""
    with torch.autocast(device_type, enabled=False):
        yield


def float32(value: Any) -> Any:
    """`value` cast to float32 if it is a floating-point tensor (other values pass through)."""
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float32:
        return value.float()
    return value


def in_float32(function: Function) -> Function:
    """`function` run with autocast disabled and its floating-point tensor arguments cast to float32:
    for what must stay exact (the counter's unit and its accumulation) under any precision."""

    @functools.wraps(function)
    def run_in_float32(*args: Any, **kwargs: Any) -> Any:
        if not torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled("cuda"):
            return function(*args, **kwargs)
        device_type = next((a.device.type for a in args if isinstance(a, torch.Tensor)), "cpu")
        with autocast_disabled(device_type):
            return function(*map(float32, args), **{key: float32(value) for key, value in kwargs.items()})

    return run_in_float32  # type: ignore[return-value]
