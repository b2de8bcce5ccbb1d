"""The counter slot's cores, which produce "count" = m_t with no squashing on m:
  AccumulatorCore:      m_t = m_{t-1} + U(x_t)   (identity recurrence)
  RecurrentUnitCore:    m_t = U([x_t, m_{t-1}])  (learned recurrence)
  LinearRecurrenceCore: z_t = lambda * z_{t-1} + gamma * B x_t, complex and diagonal (the LRU of
                        Orvieto et al. 2023), m_t = Re(C z_t) + D x_t
with x_t the concat of a core's inputs and U an arithmetic unit (NAC, NALU, NAU, NMU). They compute
in float32 even under a bfloat16 autocast, so that the count stays exact (bfloat16 holds integers
exactly only up to 256). `CounterCore` is their base, and the event counter's (`event_counter`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from nalu_rl.agents.core import Core, Signals, State, StepResult, input_width
from nalu_rl.agents.wiring import COUNT_SIGNAL, Wiring
from nalu_rl.units import RecurrentUnit, make_unit, run_in_float32


class CounterCore(Core):
    """A counter: it produces "count" = m_t [B, size] and reads its own state only through its recurrence.

    By default `prepare` gives x_t itself, the concat of its inputs, for all T steps at once when
    it reads no core.
    """

    signal = COUNT_SIGNAL

    def __init__(self, state_names: tuple[str, ...], inputs: tuple[str, ...], size: int) -> None:
        super().__init__(inputs, state_names, size)
        if COUNT_SIGNAL in inputs:
            raise ValueError("a counter core reads its own state through its recurrence, not as an input")

    @property
    def stepwise_inputs(self) -> tuple[str, ...]:
        """All its inputs when it reads another core (the concat is then built step by step), else none."""
        return self.inputs if self.reads_cores else ()

    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """x_t, one [B, width] tensor per step, when it reads no core; else None."""
        if self.reads_cores:
            return None
        return torch.cat([sequence[name] for name in self.inputs], -1).unbind(0)

    def step_input(self, prepared: Tensor | None, signals: dict[str, Tensor]) -> Tensor:
        """x_t: the prepared one, or the concat of this step's signals."""
        if prepared is not None:
            return prepared
        return torch.cat([signals[name] for name in self.inputs], -1)


class AccumulatorCore(CounterCore):
    """m_t = m_{t-1} + U(x_t): an identity recurrence, so a count cannot decay.

    When x_t depends on no other core, the increments U(x_t) of all T steps are one unit call.
    The state is named after the unit (`wiring.unit`).
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__((wiring.unit,), inputs, size)
        self.counter_unit = make_unit(wiring.unit, input_width(inputs, input_widths), size)

    @run_in_float32
    def prepare(self, sequence: dict[str, Tensor]) -> tuple[Tensor, ...] | None:
        """The increments U(x_t), one [B, size] tensor per step, when x_t reads no core; else None."""
        if self.reads_cores:
            return None
        return self.counter_unit(torch.cat([sequence[name] for name in self.inputs], -1)).unbind(0)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """m_t = m_{t-1} + U(x_t), with `prepared` the increment when it was computed ahead."""
        m = state[0] * keep
        increment = prepared if prepared is not None else self.counter_unit(self.step_input(None, signals))
        m = m + increment
        return m, (m,)


class RecurrentUnitCore(CounterCore):
    """m_t = U([x_t, m_{t-1}]): a learned linear recurrence (with a NAC or NAU), which can decay.

    The state is named after the unit (`wiring.unit`).
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__((wiring.unit,), inputs, size)
        self.counter_unit = RecurrentUnit(wiring.unit, input_width(inputs, input_widths), size)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """m_t = U([x_t, m_{t-1}])."""
        m = self.counter_unit.step(self.step_input(prepared, signals), state[0] * keep)
        return m, (m,)


class LinearRecurrence(nn.Module):
    """The parameters of a diagonal complex linear recurrence of `size` modes on `input_width` inputs.

    lambda_j = exp(-exp(nu_j) + i exp(theta_j)), so |lambda_j| < 1 whatever the weights: each mode
    is a stable, slowly decaying rotation. Following the LRU's initialisation for long memories,
    |lambda| starts uniform on the ring [0.9, 0.999] (by area) and the phase in [0, pi/10];
    gamma = sqrt(1 - |lambda|^2) (stored as its log) keeps the state's scale that of the input; B and
    C are complex Gaussian with variance 1 / (2 * input_width) and 1 / size (real and imaginary part
    each), D real Gaussian with variance 1 / input_width.
    """

    def __init__(self, input_width: int, size: int, r_min: float = 0.9, r_max: float = 0.999) -> None:
        super().__init__()
        radius_squared = torch.empty(size).uniform_(r_min**2, r_max**2)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(radius_squared)))
        self.theta_log = nn.Parameter(torch.log(torch.empty(size).uniform_(1e-4, math.pi / 10)))
        self.gamma_log = nn.Parameter(0.5 * torch.log(1 - radius_squared))
        self.input_real = nn.Parameter(torch.randn(size, input_width) / math.sqrt(2 * input_width))
        self.input_imag = nn.Parameter(torch.randn(size, input_width) / math.sqrt(2 * input_width))
        self.output_real = nn.Parameter(torch.randn(size, size) / math.sqrt(size))
        self.output_imag = nn.Parameter(torch.randn(size, size) / math.sqrt(size))
        self.skip = nn.Parameter(torch.randn(size, input_width) / math.sqrt(input_width))

    def eigenvalues(self) -> tuple[Tensor, Tensor]:
        """(real, imaginary) parts of lambda [size]."""
        modulus = torch.exp(-torch.exp(self.nu_log))
        angle = torch.exp(self.theta_log)
        return modulus * torch.cos(angle), modulus * torch.sin(angle)

    def drive(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """gamma * B x [..., size], as (real, imaginary)."""
        gamma = torch.exp(self.gamma_log)
        return gamma * (x @ self.input_real.T), gamma * (x @ self.input_imag.T)


class LinearRecurrenceCore(CounterCore):
    """The LRU in the counter's slot: a linear state without the NAC's arithmetic prior.

    z_t = lambda * z_{t-1} + gamma * B x_t and m_t = Re(C z_t) + D x_t, with z complex [size] and
    lambda diagonal (see `LinearRecurrence`); the state is (Re z, Im z). Like the accumulator it is
    linear in its inputs, so a count is within its reach; unlike it, every mode decays (|lambda| < 1)
    and its weights have no pull towards integers.
    """

    def __init__(
        self, inputs: tuple[str, ...], input_widths: Mapping[str, int], size: int, wiring: Wiring
    ) -> None:
        super().__init__(("lru_real", "lru_imag"), inputs, size)
        self.linear_recurrence = LinearRecurrence(input_width(inputs, input_widths), size)

    @run_in_float32
    def step(self, prepared: Tensor | None, signals: Signals, state: State, keep: Tensor) -> StepResult:
        """z_t from z_{t-1}; returns m_t = Re(C z_t) + D x_t and the state (Re z_t, Im z_t)."""
        recurrence = self.linear_recurrence
        x = self.step_input(prepared, signals)
        real, imag = state[0] * keep, state[1] * keep
        lambda_real, lambda_imag = recurrence.eigenvalues()
        drive_real, drive_imag = recurrence.drive(x)
        real, imag = (
            lambda_real * real - lambda_imag * imag + drive_real,
            lambda_imag * real + lambda_real * imag + drive_imag,
        )
        m = real @ recurrence.output_real.T - imag @ recurrence.output_imag.T + x @ recurrence.skip.T
        return m, (real, imag)
