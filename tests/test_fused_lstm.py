"""The LSTM core's fused unroll (`nalu_rl.agents.fused_lstm`) against its own step, with episode starts."""

import torch

from nalu_rl.agents.core import Core
from nalu_rl.agents.fused_lstm import blank_step_layout
from nalu_rl.agents.memory_cores import LSTMCore
from nalu_rl.agents.wiring import Wiring


def _core_and_sequence(steps: int = 12, batch: int = 5, width: int = 7, size: int = 9):
    torch.manual_seed(0)
    core = LSTMCore(("encoder", "stimulus"), {"encoder": width, "stimulus": 1}, size, Wiring())
    sequence = {
        "encoder": torch.randn(steps, batch, width, requires_grad=True),
        "stimulus": torch.randn(steps, batch, 1),
    }
    keep = torch.ones(steps, batch, 1)
    keep[0, 0] = 0  # env 0 starts an episode at the first step: the given state is not read
    keep[4, 1] = keep[5, 1] = keep[9, 1] = 0  # env 1: three starts, two in a row
    keep[steps - 1, 2] = 0  # env 2: a start at the last step
    state = (torch.randn(batch, size), torch.randn(batch, size))
    return core, sequence, keep, state


def test_a_blank_step_precedes_each_start_after_the_first_step() -> None:
    keep = torch.ones(4, 2, 1)
    keep[0, 0] = keep[2, 0] = keep[3, 1] = 0
    rows, length = blank_step_layout(keep)
    # Env 0: steps at times 0, 1, then a blank, then 3, 4; env 1: 0, 1, 2, a blank, 4.
    times = rows.view(4, 2) // 2
    assert torch.equal(times, torch.tensor([[0, 0], [1, 1], [3, 2], [4, 4]]))
    assert length == 5 and torch.equal(rows.view(4, 2) % 2, torch.tensor([[0, 1]] * 4))


def test_the_fused_unroll_equals_the_step_by_step_lstm_in_outputs_state_and_gradients() -> None:
    core, sequence, keep, state = _core_and_sequence()
    fused_outputs, (fused_h, fused_c) = core.unroll(sequence, state, keep)
    stepped_outputs, (stepped_h, stepped_c) = Core.unroll(core, sequence, state, keep)
    torch.testing.assert_close(fused_outputs, stepped_outputs, rtol=0, atol=1e-6)
    torch.testing.assert_close(fused_h, stepped_h, rtol=0, atol=1e-6)
    torch.testing.assert_close(fused_c, stepped_c, rtol=0, atol=1e-6)

    def gradients(outputs, c):
        loss = (outputs * torch.linspace(-1, 1, outputs.shape[-1])).square().sum() + c.sum()
        return torch.autograd.grad(loss, [sequence["encoder"], *core.parameters()])

    for fused, stepped in zip(
        gradients(fused_outputs, fused_c), gradients(stepped_outputs, stepped_c), strict=True
    ):
        torch.testing.assert_close(fused, stepped, rtol=1e-5, atol=1e-6)


def test_no_gradient_crosses_an_episode_start() -> None:
    core, sequence, keep, state = _core_and_sequence()
    outputs, _ = core.unroll(sequence, state, keep)
    (gradient,) = torch.autograd.grad(outputs[4:, 1].sum(), [sequence["encoder"]])
    # Env 1 starts again at step 4: what it outputs from then on owes nothing to its steps before.
    assert torch.count_nonzero(gradient[:4, 1]) == 0
    assert torch.count_nonzero(gradient[4:, 1]) > 0


def test_the_fused_unroll_under_bfloat16_autocast_stays_near_float32() -> None:
    core, sequence, keep, state = _core_and_sequence()
    with torch.no_grad():
        exact, _ = Core.unroll(core, sequence, state, keep)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            reduced, (h, c) = core.unroll(sequence, state, keep)
    assert reduced.dtype == torch.float32 and c.dtype == torch.float32
    torch.testing.assert_close(reduced, exact, rtol=0, atol=2e-2)
