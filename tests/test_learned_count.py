"""learned-count: binary gates that are exactly 0 or 1, a count of them that stays exact, and an agent
that trains on a timing task it was never written for (a Box of flags, no stimulus entry)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

from nalu_rl.agents import make_agent
from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.envs import IntervalTimingEnv
from nalu_rl.units import (
    ARITHMETIC_UNITS,
    BinaryGate,
    GridSnap,
    SnappedNAU,
    register_unit,
    snap_to_grid,
    snap_to_integers,
    straight_through_step,
)


def test_a_binary_gate_is_exactly_zero_or_one_at_any_scale_with_the_sigmoids_gradient() -> None:
    pre_activation = torch.tensor([-1e6, -3.0, -1e-7, 1e-7, 0.5, 1e6], requires_grad=True)
    events = straight_through_step(pre_activation)
    assert events.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    events.sum().backward()
    sigmoid = torch.sigmoid(pre_activation.detach())
    assert torch.allclose(pre_activation.grad, sigmoid * (1 - sigmoid))


def test_the_gates_margin_regularizer_is_zero_only_when_every_pre_activation_clears_the_margin() -> None:
    gate = BinaryGate(3, 2, margin=1.0)
    with torch.no_grad():
        gate.linear.weight.zero_()
        gate.linear.bias.copy_(torch.tensor([2.0, -0.25]))
    gate(torch.randn(4, 3))
    assert gate.regularizer().item() == 0.75 / 2  # only the second event is inside the margin
    gate.forget_pre_activations()
    with torch.no_grad():
        gate.linear.bias.copy_(torch.tensor([2.0, -1.5]))
    gate(torch.randn(4, 3))
    assert gate.regularizer().item() == 0.0


def test_the_gates_margin_regularizer_over_steps_of_different_batches_is_the_mean_of_their_means() -> None:
    gate = BinaryGate(1, 1, margin=1.0)
    with torch.no_grad():
        gate.linear.weight.fill_(1.0)
        gate.linear.bias.zero_()
    gate(torch.tensor([[0.5], [2.0]]))  # shortfalls 0.5, 0: mean 0.25
    gate(torch.tensor([[0.0]]))  # shortfall 1
    assert gate.regularizer().item() == (0.25 + 1.0) / 2


def test_the_event_counter_applies_a_units_own_forward_pass_where_it_is_not_linear() -> None:
    class Doubled(SnappedNAU):
        def forward(self, x):
            return 2 * super().forward(x)

    register_unit("doubled-snap-nau", Doubled)
    try:
        space = IntervalTimingEnv(obs_mode="symbolic").observation_space
        torch.manual_seed(0)
        plain = make_agent("learned-count", space)
        torch.manual_seed(0)
        doubled = make_agent("learned-count", space, unit="doubled-snap-nau")
        doubled.load_state_dict(plain.state_dict())
        counts = [
            _play_interval_timing(model, delay=5, steps=12)["output"][:, 0] for model in (plain, doubled)
        ]
    finally:
        del ARITHMETIC_UNITS["doubled-snap-nau"]
    assert counts[0].abs().sum() > 0
    assert torch.equal(counts[1], 2 * counts[0])


def test_snapped_weights_are_exact_integers_near_one_and_zero_and_pass_the_gradient() -> None:
    raw = torch.tensor([0.9973, 0.0027, -0.04, -0.5, 0.93], requires_grad=True)
    snapped = snap_to_integers(raw, 0.05)
    assert snapped.tolist()[:3] == [1.0, 0.0, 0.0]  # exactly, not approximately
    assert snapped.tolist()[3:] == raw.tolist()[3:]
    snapped.sum().backward()
    assert raw.grad.tolist() == [1.0] * 5
    unit = SnappedNAU(2, 1)
    with torch.no_grad():
        unit.W.copy_(torch.tensor([[0.999, -0.0004]]))
    x = torch.tensor([[1000.0, 12345.0]])
    assert unit(x).item() == 1000.0
    assert unit.regularizer().item() > 0  # the raw weights, not the snapped ones


def test_increments_near_a_multiple_of_one_half_count_as_exactly_that_and_are_pulled_there() -> None:
    snap = GridSnap(step=0.5, tolerance=0.05)
    raw = torch.tensor([0.4983, -0.5017, 0.96, 0.3, -0.04, 999.02], requires_grad=True)
    snapped = snap(raw)
    assert snapped.tolist() == [0.5, -0.5, 1.0, pytest.approx(0.3), 0.0, 999.0]
    snapped.sum().backward()
    assert raw.grad.tolist() == [1.0] * 6  # straight-through
    # The regulariser: the mean distance to the grid, whose gradient moves each value towards it.
    distance = snap.regularizer()
    assert distance.item() == pytest.approx((0.0017 + 0.0017 + 0.04 + 0.2 + 0.04 + 0.02) / 6, abs=1e-4)
    raw.grad = None
    distance.backward()
    stepped = raw.detach() - 1e-3 * raw.grad  # one small step of gradient descent
    nearest = torch.tensor([0.5, -0.5, 1.0, 0.5, 0.0, 999.0])
    assert ((stepped - nearest).abs() < (raw.detach() - nearest).abs()).all()
    # A count of a light and a dark at +-0.4983 / 0.5017 a step is off by 3.4 after 1000 steps of each;
    # snapped, it is back at exactly zero.
    light, dark = torch.full((1000,), 0.4983), torch.full((1000,), -0.5017)
    assert torch.cat([light, dark]).sum().abs() > 3
    assert snap(torch.cat([light, dark])).sum().item() == 0.0
    snap.forget_values()
    assert snap.regularizer().item() == 0.0
    with pytest.raises(ValueError, match="tolerance"):
        GridSnap(step=0.5, tolerance=0.25)


def test_a_bounded_grid_pulls_a_step_beyond_its_bound_back_to_it_rather_than_keeping_it() -> None:
    # Two always-on events at -0.70 and -0.80 add -1.5 a step: on the 1/2 grid, so an unbounded snap
    # keeps it; a timer's events add at most one step a step, so the bounded grid pulls it to -1.
    unbounded, bounded = GridSnap(step=0.5, tolerance=0.05), GridSnap(step=0.5, tolerance=0.05, bound=1.0)
    raw = torch.tensor([-1.5, -1.02, 0.49, 2.0], requires_grad=True)
    assert unbounded(raw).tolist() == [-1.5, -1.0, 0.5, 2.0]
    assert bounded(raw).tolist() == [-1.5, -1.0, 0.5, 2.0]  # within the bound the two agree
    assert unbounded.regularizer().item() == pytest.approx((0.02 + 0.01) / 4, abs=1e-6)
    distance = bounded.regularizer()
    assert distance.item() == pytest.approx((0.5 + 0.02 + 0.01 + 1.0) / 4, abs=1e-6)
    distance.backward()
    # Descent moves -1.5 up to -1, -1.02 up to -1, 0.49 up to 1/2, 2 down to 1.
    assert raw.grad.tolist() == pytest.approx([-0.25, -0.25, -0.25, 0.25])
    assert GridSnap(step=0.5, tolerance=0.05, bound=1.0)(torch.tensor([-1.52, 1.04])).tolist() == [
        pytest.approx(-1.52),
        1.0,
    ]
    for bound in (0.0, 0.75):
        with pytest.raises(ValueError, match="bound"):
            GridSnap(step=0.5, tolerance=0.05, bound=bound)


def _play_interval_timing(model: torch.nn.Module, delay: int, steps: int) -> dict[str, torch.Tensor]:
    """The model's count output [steps, size + events + phase] over one IntervalTiming episode's
    observations (the agent standing still, so the episode's observations are the light's)."""
    env = IntervalTimingEnv(obs_mode="symbolic", max_delay=steps)
    observation, _ = env.reset(seed=0, options={"delay": delay})
    frames = []
    for _ in range(steps):
        frames.append({key: torch.as_tensor(value) for key, value in observation.items()})
        observation = {**observation, "stimulus": np.float32([1.0 if len(frames) < delay else 0.0])}
    sequence = {key: torch.stack([frame[key] for frame in frames])[:, None] for key in frames[0]}
    starts = torch.zeros(steps, 1, dtype=torch.bool)
    starts[0] = True
    outputs = []
    core = model.cores["count"]
    original_unroll = core.unroll

    def recording_unroll(*args, **kwargs):
        output, state = original_unroll(*args, **kwargs)
        outputs.append(output)
        return output, state

    core.unroll = recording_unroll
    with torch.no_grad():
        model(sequence, starts, model.initial_state(1))
    (output,) = outputs
    return {"output": output[:, 0], "stimulus": sequence["stimulus"][:, 0]}


def test_with_unit_weights_the_count_is_an_exact_integer_sum_of_its_events_over_1000_steps() -> None:
    torch.manual_seed(0)
    model = make_agent("learned-count", IntervalTimingEnv(obs_mode="symbolic").observation_space)
    core = model.cores["count"]
    with torch.no_grad():
        # stimulus +1, event 0 -1, event 1 +1, complement of event 0 +1, of event 1 0
        core.counter_unit.W.copy_(torch.tensor([[1.0, -1.0, 1.0, 1.0, 0.0]]))
    played = _play_interval_timing(model, delay=300, steps=1000)
    output, stimulus = played["output"], played["stimulus"]
    count, events = output[:, 0], output[:, 1 : 1 + EventCounterCore.EVENTS]
    phase = output[:, 1 + EventCounterCore.EVENTS :]
    assert set(events.unique().tolist()) <= {0.0, 1.0}
    assert set(phase.unique().tolist()) <= {0.0, 1.0}
    expected = torch.cumsum(stimulus[:, 0] - events[:, 0] + events[:, 1] + (1 - events[:, 0]), 0)
    assert torch.equal(count, expected)  # exact, not close


def test_with_a_unit_that_is_not_linear_the_events_part_of_each_increment_is_what_is_snapped() -> None:
    # An NMU multiplies its inputs: what the events add is the unit's output with the stimulus at 0,
    # snapped onto the bounded grid; the stimulus adds the rest of the unit's output.
    torch.manual_seed(0)
    model = make_agent("learned-count", IntervalTimingEnv(obs_mode="symbolic").observation_space)
    core = model.cores["count"]
    unit = ARITHMETIC_UNITS["nmu"](core.counter_unit.in_features, 1)
    core.counter_unit = unit
    assert not unit.is_linear
    with torch.no_grad():  # factors W x + 1 - W: the stimulus's 0.52 at x = 0, each event's 1/2 or 1
        unit.W.copy_(torch.tensor([[0.48, 0.5, 0.5, 0.0, 0.0]]))
    played = _play_interval_timing(model, delay=5, steps=12)
    events = played["output"][:, 1 : 1 + EventCounterCore.EVENTS]
    pairs = torch.cat([events, 1 - events], -1)
    with torch.no_grad():
        from_events = unit(torch.cat([torch.zeros_like(played["stimulus"]), pairs], -1))
        from_stimulus = unit(torch.cat([played["stimulus"], pairs], -1)) - from_events
    snapped = snap_to_grid(from_events, 0.5, 0.05, bound=1.0)
    assert not torch.equal(snapped, from_events)  # 0.52 counts as 1/2
    assert torch.equal(played["output"][:, 0], torch.cumsum((from_stimulus + snapped)[:, 0], 0))


def test_learned_count_reads_neither_a_stimulus_entry_nor_a_grid() -> None:
    flags = gymnasium.spaces.Box(0.0, 1.0, (3,), np.float32)
    model = make_agent("learned-count", flags, num_actions=2)
    sequence = {"observation": torch.rand(7, 4, 3)}
    logits, values, _ = model(sequence, torch.zeros(7, 4, dtype=torch.bool), model.initial_state(4))
    assert logits.shape == (7, 4, 2) and values.shape == (7, 4)


FLAG_TASK = '''
"""A timing task of flags, written as a user would: a cue flag is on for T steps; act at t == 2T."""

import gymnasium
import numpy as np


class FlagTiming(gymnasium.Env):
    metadata = {"render_modes": [], "task_options": ()}

    def __init__(self, delay_range=(3, 6), max_delay=1000):
        self.delay_range = tuple(delay_range)
        self.max_delay = max_delay
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)

    def due_time(self, delay):
        return 2 * delay

    def success_ceiling(self, delay):
        return 1.0

    def _observation(self):
        return np.float32([self.t < self.delay, 1.0])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        low, high = self.delay_range
        self.delay = int((options or {}).get("delay") or self.np_random.integers(low, high + 1))
        self.t = 0
        return self._observation(), {"delay": self.delay, "t": 0}

    def step(self, action):
        self.t += 1
        info = {"delay": self.delay, "t": self.t}
        if action == 1 or self.t >= 2 * self.delay + 2:
            success = action == 1 and self.t == 2 * self.delay
            info.update(success=success, outcome="success" if success else "late")
            return self._observation(), 1.0 if success else -1.0, True, False, info
        return self._observation(), 0.0, False, False, info


gymnasium.register("flag_task/FlagTiming-v0", entry_point=FlagTiming)
'''


def test_a_users_timing_task_of_flags_without_a_stimulus_trains_with_learned_count(tmp_path: Path) -> None:
    (tmp_path / "flag_task.py").write_text(textwrap.dedent(FLAG_TASK))
    run = tmp_path / "run"
    command = [
        sys.executable, "-m", "nalu_rl.train", "--import", "flag_task", "--env-id", "flag_task/FlagTiming-v0",
        "--agent", "learned-count", "--actors", "0", "--envs-per-actor", "8", "--unroll-length", "5",
        "--total-steps", "4000", "--eval-episodes", "4", "--eval-max-delay", "12", "--no-progress",
        "--logdir", str(run),
    ]  # fmt: skip
    finished = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert (run / "checkpoint.pt").is_file()
    assert json.loads((run / "config.json").read_text())["agent"] == "learned-count"


def test_the_shipped_learned_count_counts_the_time_left_with_events_of_exactly_0_or_1_to_T_1000() -> None:
    """The shipped `learned-count` (TimeTrack, symbolic), played at T = 1000: every event is exactly 0
    or 1 at every step, and the count is the time left, T - t - 1 (or its negative), to the last step."""
    from nalu_rl.checkpoint import load_agent, shipped_checkpoint
    from nalu_rl.state_probe import record_state_traces

    model, config = load_agent(shipped_checkpoint("learned-count"))
    assert (
        config.get("env_id", "nalu_rl/TimeTrack-v0") == "nalu_rl/TimeTrack-v0"
        and config["agent"] == "learned-count"
    )
    delay = 1000
    (trace,) = record_state_traces(model, config, [delay], episodes=1)
    events = np.concatenate([trace.views["event_bits"], trace.views["event_phase"]], axis=1)
    assert trace.steps > 900 and np.isin(events, (0.0, 1.0)).all()
    count = trace.views["event_count"][:, 0]
    time_left = trace.time_left() - 1.0  # T - t - 1
    assert np.array_equal(count, time_left) or np.array_equal(count, -time_left)


def test_the_shipped_interval_timing_learned_count_counts_light_up_and_dark_down_exactly_to_T_1000() -> None:
    """The shipped `learned-count-interval` (IntervalTiming, symbolic), played at T = 1000: every event
    is exactly 0 or 1, and its count is c * (light steps - dark steps so far) with c = +-1/2 or +-1 at
    every one of the 2000 steps, so it is c * (2T - t - 1) through the dark half and zero at the due
    time's last step."""
    from nalu_rl.checkpoint import load_agent, shipped_checkpoint
    from nalu_rl.state_probe import record_state_traces

    model, config = load_agent(shipped_checkpoint("learned-count-interval"))
    assert config["env_id"] == "nalu_rl/IntervalTiming-v0" and config["agent"] == "learned-count"
    delay = 1000
    (trace,) = record_state_traces(model, config, [delay], episodes=1)
    events = np.concatenate([trace.views["event_bits"], trace.views["event_phase"]], axis=1)
    assert trace.steps >= 2 * delay and np.isin(events, (0.0, 1.0)).all()
    count = trace.views["event_count"][: 2 * delay, 0]
    t = np.arange(2 * delay)
    light_minus_dark = np.where(t < delay, t + 1, 2 * delay - t - 1).astype(np.float32)
    assert any(np.array_equal(count, scale * light_minus_dark) for scale in (0.5, -0.5, 1.0, -1.0))


def _forward_and_gradients(
    model: torch.nn.Module, obs: dict, starts: torch.Tensor, state: tuple[torch.Tensor, ...]
) -> tuple[torch.Tensor, ...]:
    """The logits, value and state after a sequence, and the gradient of a loss of all three."""
    model.zero_grad()
    logits, value, next_state = model(obs, starts, state)
    loss = logits.square().mean() + value.mean() + sum(tensor.sum() for tensor in next_state)
    (loss + model.regularizer()).backward()
    gradients = tuple(weight.grad.clone() for weight in model.parameters() if weight.grad is not None)
    return (logits.detach(), value.detach(), *next_state, *gradients)


@pytest.mark.parametrize("unit", ["snap-nau", "nmu"])
def test_the_event_counter_run_over_a_sequence_at_once_equals_it_stepped_step_by_step(unit: str) -> None:
    # episodes start at steps 0, 3 and 11 of some sequences and never in others (the state carried in)
    torch.manual_seed(0)
    space = IntervalTimingEnv(obs_mode="symbolic").observation_space
    model = make_agent("learned-count", space, unit=unit)
    count_core = model.cores["count"]
    assert count_core in model.unrolled_alone
    steps, batch = 16, 6
    obs = {key: torch.randn(steps, batch, *subspace.shape) for key, subspace in space.spaces.items()}
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[0, :2], starts[3, 1:4], starts[11, ::2] = True, True, True
    state = tuple(torch.rand_like(tensor) for tensor in model.initial_state(batch))  # carried in
    at_once = _forward_and_gradients(model, obs, starts, state)
    model.unrolled_alone = ()
    stepped = _forward_and_gradients(model, obs, starts, state)
    assert len(at_once) == len(stepped) > 5
    for a, b in zip(at_once, stepped, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_the_event_counter_without_gradients_reads_its_parameters_as_they_are_after_each_change() -> None:
    # Without gradients the counter keeps the weights it derives from its parameters between calls;
    # a change in place (an optimiser's step, load_state_dict) must reach the next call.
    torch.manual_seed(0)
    space = IntervalTimingEnv(obs_mode="symbolic").observation_space
    model, reference = (make_agent("learned-count", space) for _ in range(2))
    steps, batch = 4, 3
    obs = {key: torch.randn(steps, batch, *subspace.shape) for key, subspace in space.spaces.items()}
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[0] = True

    def played(agent: torch.nn.Module) -> torch.Tensor:
        with torch.no_grad():
            return agent(obs, starts, agent.initial_state(batch))[0]

    core = model.cores["count"]
    changes = (
        lambda: core.counter_unit.W.mul_(-1.0),
        lambda: core.event_gate.linear.bias.sub_(3.0),
        lambda: core.phase_gate.linear.weight.add_(0.5),
        lambda: model.load_state_dict(make_agent("learned-count", space).state_dict()),
    )
    before = played(model)
    for change in changes:
        with torch.no_grad():
            change()
        reference.load_state_dict(model.state_dict())
        after = played(model)
        assert torch.equal(after, played(reference))
        assert not torch.equal(after, before)
        before = after
