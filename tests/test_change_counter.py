"""The change counter (`nalu_rl.agents.change_counter`): phase bits toggled by the observation's
change, counted exactly; and the grid NAU it counts with."""

from __future__ import annotations

import torch

from nalu_rl.agents.change_counter import ChangeCounterCore, WholeStepChangeCounterCore
from nalu_rl.agents.wiring import Wiring
from nalu_rl.units import GridNAU, RoundingSnap, SnappedNAU

_QUIET, _CUE = (0.0, 0.0, 1.0), (1.0, 0.0, 0.0)


def _core() -> ChangeCounterCore:
    """A change counter on a 3-wide encoder whose first toggle fires where the first feature rises,
    and whose count adds that bit (weights on [p_0, p_1, 1 - p_0, 1 - p_1])."""
    torch.manual_seed(0)
    core = ChangeCounterCore(("encoder",), {"encoder": 3}, 1, Wiring(unit="grid-nau"))
    with torch.no_grad():
        core.phase_gate.linear.weight.zero_()
        core.phase_gate.linear.weight[0, 0] = 1.0
        core.counter_unit.W.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0]]))
    return core


def _cued_frames(cue_steps: tuple[int, ...], steps: int, batch: int = 1) -> torch.Tensor:
    frames = torch.tensor([_CUE if t in cue_steps else _QUIET for t in range(steps)])
    return frames.unsqueeze(1).expand(steps, batch, 3).clone()


def _keep(steps: int, batch: int, starts: tuple[int, ...] = (0,)) -> torch.Tensor:
    keep = torch.ones(steps, batch, 1)
    keep[list(starts)] = 0.0
    return keep


def test_a_cue_opens_the_interval_the_next_closes_it_and_the_count_adds_the_steps_between() -> None:
    core = _core()
    steps = 1000
    frames = _cued_frames((3, 10, 400), steps)
    with torch.no_grad():
        output, _ = core.unroll({"encoder": frames}, core.initial_state(1), _keep(steps, 1))
    count, phase = output[:, 0, 0], output[:, 0, -ChangeCounterCore.PHASE_BITS]
    expected_phase = torch.zeros(steps)
    expected_phase[3:10] = 1.0  # toggled on at the first cue, off at the second
    expected_phase[400:] = 1.0  # and on again at the third, to the end
    assert torch.equal(phase, expected_phase)
    assert torch.equal(count, torch.cumsum(expected_phase, 0))  # exact, not close: 7 + 600 at the end
    assert float(count[-1]) == 607.0


def test_a_rounding_snap_uses_every_value_as_its_nearest_whole_step_and_passes_the_gradient() -> None:
    snap = RoundingSnap(step=1.0, bound=1.0).train()
    value = torch.tensor([0.553, -0.482, -0.52, 0.2, 1.7, -3.0], requires_grad=True)
    snapped = snap(value)
    assert snapped.tolist() == [1.0, 0.0, -1.0, 0.0, 1.0, -1.0]
    snapped.sum().backward()
    assert value.grad.tolist() == [1.0] * 6  # straight-through
    # The regulariser pulls each value towards the point it is used as.
    expected = (value.detach() - snapped.detach()).abs().mean()
    torch.testing.assert_close(snap.regularizer().detach(), expected)


def test_the_whole_step_change_counter_counts_increments_off_the_grid_as_whole_steps() -> None:
    torch.manual_seed(0)
    core = WholeStepChangeCounterCore(("encoder",), {"encoder": 3}, 1, Wiring(unit="grid-nau"))
    with torch.no_grad():
        core.phase_gate.linear.weight.zero_()
        core.phase_gate.linear.weight[0, 0] = 1.0
        # +0.553 a step inside the interval, -0.62 outside: the change counter's grid of 1/2 uses
        # neither as exact; here they are +1 and -1.
        core.counter_unit.W.copy_(torch.tensor([[0.553, 0.0, -0.62, 0.0]]))
    steps = 1000
    frames = _cued_frames((3, 400), steps)
    with torch.no_grad():
        output, _ = core.unroll({"encoder": frames}, core.initial_state(1), _keep(steps, 1))
    inside = torch.zeros(steps)
    inside[3:400] = 1.0
    assert torch.equal(output[:, 0, 0], torch.cumsum(2.0 * inside - 1.0, 0))
    assert float(output[-1, 0, 0]) == 397.0 - 603.0


def test_the_change_counter_stepped_one_step_at_a_time_equals_it_unrolled() -> None:
    core = _core()
    with torch.no_grad():
        core.phase_gate.linear.weight.add_(0.3 * torch.randn_like(core.phase_gate.linear.weight))
    steps, batch = 30, 4
    frames = _cued_frames((2, 9, 17, 25), steps, batch) + 0.1 * torch.randn(steps, batch, 3)
    keep = _keep(steps, batch, (0, 12))
    state = tuple(torch.rand_like(tensor) for tensor in core.initial_state(batch))  # carried in
    with torch.no_grad():
        at_once, state_at_once = core.unroll({"encoder": frames}, state, keep)
        prepared = core.prepare({"encoder": frames})
        stepped, stepped_state = [], state
        for t in range(steps):
            output, stepped_state = core.step(prepared[t], {}, stepped_state, keep[t])
            stepped.append(output)
    torch.testing.assert_close(torch.stack(stepped), at_once)
    for one, other in zip(stepped_state, state_at_once, strict=True):
        torch.testing.assert_close(one, other)


def test_the_change_counter_reads_its_inputs_with_their_gradient_stopped_and_trains_its_gates() -> None:
    core = _core()
    frames = _cued_frames((3, 10), 20).requires_grad_(True)
    output, _ = core.unroll({"encoder": frames}, core.initial_state(1), _keep(20, 1))
    output[-1, 0, 0].backward()
    assert frames.grad is None
    assert core.phase_gate.linear.weight.grad.abs().sum() > 0  # the toggles learn from the count's loss
    assert core.counter_unit.W.grad.abs().sum() > 0


def test_the_grid_nau_adds_as_the_snapped_nau_without_a_pull_on_its_weights() -> None:
    torch.manual_seed(0)
    grid, snapped = GridNAU(4, 2), SnappedNAU(4, 2)
    snapped.load_state_dict(grid.state_dict())
    x = torch.randn(5, 4)
    torch.testing.assert_close(grid(x), snapped(x))
    assert float(snapped.regularizer().detach()) > 0.0
    assert float(grid.regularizer()) == 0.0


def test_a_checkpoint_of_a_change_counter_that_carried_an_event_gate_loads_without_it() -> None:
    from nalu_rl.agents import make_agent
    from nalu_rl.checkpoint import upgrade_model_state
    from nalu_rl.envs import ReadySetGoEnv

    model = make_agent("taught-count", ReadySetGoEnv().observation_space, 2)
    state = dict(model.state_dict())
    state["cores.count.event_gate.linear.weight"] = torch.zeros(2, 4)
    state["cores.count.event_gate.linear.bias"] = torch.zeros(2)
    model.load_state_dict(upgrade_model_state(model, state))  # strict: no key left over
    learned = make_agent("learned-count", ReadySetGoEnv().observation_space, 2)
    kept = upgrade_model_state(learned, dict(learned.state_dict()))
    assert "cores.count.event_gate.linear.weight" in kept  # a learned event gate stays
