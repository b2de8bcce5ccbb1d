"""The model's cores one by one (state, reset, step) and the count clip of the actor head."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

from nalu_rl.agents import Wiring, agent_wiring, make_agent
from nalu_rl.agents.core import Core
from nalu_rl.agents.counter_cores import AccumulatorCore, LinearRecurrenceCore, RecurrentUnitCore
from nalu_rl.agents.memory_cores import GRUCore, LSTMCore

WIDTHS = {"encoder": 6, "stimulus": 1, "bias": 1, "memory": 5, "count": 3}
NAC, NAU = Wiring(unit="nac"), Wiring(unit="nau")
STEPS, BATCH = 5, 4


def sequence_signals(seed: int = 0) -> dict[str, torch.Tensor]:
    """Random [T, B, width] sequence signals: encoder features, stimulus, bias."""
    generator = torch.Generator().manual_seed(seed)
    stimulus = torch.randint(0, 9, (STEPS, BATCH, 1), generator=generator).float()
    return {
        "encoder": torch.randn(STEPS, BATCH, WIDTHS["encoder"], generator=generator),
        "stimulus": stimulus,
        "bias": torch.ones_like(stimulus),
    }


def random_state(core: Core, seed: int = 1) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(zeros.shape, generator=generator) for zeros in core.initial_state(BATCH))


def all_cores() -> list[Core]:
    torch.manual_seed(0)
    return [
        LSTMCore(("encoder", "stimulus"), WIDTHS, WIDTHS["memory"], NAC),
        LSTMCore(("encoder", "stimulus", "count"), WIDTHS, WIDTHS["memory"], NAC),
        GRUCore(("encoder", "stimulus"), WIDTHS, WIDTHS["memory"], NAC),
        GRUCore(("encoder", "stimulus", "count"), WIDTHS, WIDTHS["memory"], NAC),
        AccumulatorCore(("stimulus", "bias"), WIDTHS, WIDTHS["count"], NAC),
        AccumulatorCore(("memory", "stimulus", "bias"), WIDTHS, WIDTHS["count"], NAU),
        RecurrentUnitCore(("stimulus", "bias"), WIDTHS, WIDTHS["count"], NAC),
        RecurrentUnitCore(("memory", "stimulus"), WIDTHS, WIDTHS["count"], NAC),
        LinearRecurrenceCore(("stimulus", "bias"), WIDTHS, WIDTHS["count"], NAC),
        LinearRecurrenceCore(("memory", "stimulus"), WIDTHS, WIDTHS["count"], NAC),
    ]


def step_signals(core: Core, sequence: dict[str, torch.Tensor], t: int) -> dict[str, torch.Tensor]:
    """Step t of the sequence signals plus stand-ins for the other cores' outputs."""
    generator = torch.Generator().manual_seed(100 + t)
    signals = {name: values[t] for name, values in sequence.items()}
    for name in core.reads_cores:
        signals[name] = torch.randn(BATCH, WIDTHS[name], generator=generator)
    return signals


def run_core(core: Core, state: tuple[torch.Tensor, ...], keeps: torch.Tensor, prepare: bool = True):
    """Step `core` through the sequence; returns the outputs [T, B, size] and the final state."""
    sequence = sequence_signals()
    prepared = core.prepare(sequence) if prepare else None
    outputs = []
    for t in range(STEPS):
        step_input = None if prepared is None else prepared[t]
        output, state = core.step(step_input, step_signals(core, sequence, t), state, keeps[t])
        outputs.append(output)
    return torch.stack(outputs), state


@pytest.mark.parametrize("core", all_cores(), ids=repr)
def test_each_core_zeroes_its_state_exactly_where_an_episode_starts(core: Core) -> None:
    keep_all = torch.ones(STEPS, BATCH, 1)
    restart = keep_all.clone()
    restart[0, 1] = 0.0  # episode 1 starts at step 0: its carried state must be forgotten
    with torch.no_grad():
        from_warm, _ = run_core(core, random_state(core), restart)
        from_zero, _ = run_core(core, core.initial_state(BATCH), keep_all)
    torch.testing.assert_close(from_warm[:, 1], from_zero[:, 1], rtol=0, atol=0)
    assert not torch.allclose(from_warm[:, 0], from_zero[:, 0])


@pytest.mark.parametrize("core", all_cores(), ids=repr)
def test_each_core_names_a_state_of_its_own_size(core: Core) -> None:
    state = core.initial_state(BATCH)
    assert len(state) == len(core.state_names)
    assert all(tensor.shape == (BATCH, core.state_size) and not tensor.any() for tensor in state)


def test_accumulator_increments_in_one_call_equal_the_step_by_step_path() -> None:
    torch.manual_seed(0)
    core = AccumulatorCore(("encoder", "stimulus", "bias"), WIDTHS, WIDTHS["count"], NAC)
    keeps = torch.ones(STEPS, BATCH, 1)
    keeps[2, 0] = 0.0
    prepared = core.prepare(sequence_signals())
    assert prepared is not None and len(prepared) == STEPS
    with torch.no_grad():
        in_one_call, final = run_core(core, random_state(core), keeps, prepare=True)
        step_by_step, final_stepped = run_core(core, random_state(core), keeps, prepare=False)
    torch.testing.assert_close(in_one_call, step_by_step, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(final[0], final_stepped[0], rtol=1e-6, atol=1e-6)


def test_accumulator_adds_its_increment_to_the_carried_count() -> None:
    core = AccumulatorCore(("stimulus", "bias"), WIDTHS, 1, NAC)
    with torch.no_grad():
        core.counter_unit.W_hat.fill_(20.0)  # W = [1, 1] exactly: the increment is stimulus + 1
        core.counter_unit.M_hat.fill_(20.0)
    counts, (final,) = run_core(core, (torch.full((BATCH, 1), 10.0),), torch.ones(STEPS, BATCH, 1))
    expected = 10.0 + torch.cumsum(sequence_signals()["stimulus"] + 1.0, dim=0)
    torch.testing.assert_close(counts, expected, rtol=0, atol=0)
    torch.testing.assert_close(final, expected[-1], rtol=0, atol=0)


def test_the_linear_recurrence_is_the_complex_diagonal_recurrence_and_stays_stable() -> None:
    torch.manual_seed(3)
    core = LinearRecurrenceCore(("encoder", "stimulus", "bias"), WIDTHS, WIDTHS["count"], NAC)
    recurrence = core.linear_recurrence
    modulus = torch.exp(-torch.exp(recurrence.nu_log)).detach()
    assert bool(((modulus >= 0.9) & (modulus <= 0.999)).all())
    keeps = torch.ones(STEPS, BATCH, 1)
    with torch.no_grad():
        outputs, (real, imag) = run_core(core, core.initial_state(BATCH), keeps)
        lam = torch.complex(*recurrence.eigenvalues()).to(torch.complex128)
        gamma = torch.exp(recurrence.gamma_log).double()
        b = torch.complex(recurrence.input_real, recurrence.input_imag).to(torch.complex128)
        c = torch.complex(recurrence.output_real, recurrence.output_imag).to(torch.complex128)
        sequence = sequence_signals()
        z = torch.zeros(BATCH, WIDTHS["count"], dtype=torch.complex128)
        for t in range(STEPS):
            x = torch.cat([sequence[name][t] for name in core.inputs], -1).double()
            z = lam * z + gamma * (x.to(torch.complex128) @ b.T)
            expected = (z @ c.T).real + x @ recurrence.skip.double().T
            torch.testing.assert_close(outputs[t].double(), expected, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(torch.complex(real, imag).to(torch.complex128), z, rtol=1e-5, atol=1e-5)
        # Whatever the weights, |lambda| never exceeds 1: no mode can grow.
        recurrence.nu_log.fill_(-30.0)
        assert bool((torch.complex(*recurrence.eigenvalues()).abs() <= 1.0).all())


def test_only_a_core_that_concats_another_cores_signal_prepares_nothing_ahead() -> None:
    for core in all_cores():
        prepared = core.prepare(sequence_signals())
        reads_a_core_stepwise = not isinstance(core, LSTMCore) and bool(core.reads_cores)
        assert (prepared is None) == reads_a_core_stepwise


@pytest.mark.parametrize(
    ("name", "order"),
    [
        ("nac", ("memory", "count")),  # neither reads the other
        ("nac-paper", ("memory", "count")),  # the counter reads h_t
        ("nac-lstm-feeds", ("memory", "count")),
        ("nac-lstm-reads", ("count", "memory")),  # the LSTM reads m_t
        ("nac-ff", ("count",)),
        ("lstm", ("memory",)),
        ("gru", ("memory",)),
    ],
)
def test_a_core_that_reads_another_steps_after_it(name: str, order: tuple[str, ...]) -> None:
    model = make_agent(name, symbolic_space())
    assert tuple(core.signal for core in model.step_order) == order


def symbolic_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "grid": spaces.Box(0, 1, (2, 5, 5), np.uint8),
            "stimulus": spaces.Box(0, 1000, (1,), np.float32),
        }
    )


def counting_inputs(steps: int, batch: int) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Observations whose stimulus is large at step 0, so that an accumulator's count grows large."""
    generator = torch.Generator().manual_seed(5)
    grid = torch.randint(0, 2, (steps, batch, 2, 5, 5), generator=generator).to(torch.uint8)
    stimulus = torch.zeros(steps, batch, 1)
    stimulus[0] = 40.0
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[0] = True
    return {"grid": grid, "stimulus": stimulus}, starts


def test_actor_count_clip_clamps_the_count_the_actor_reads_and_not_the_critics() -> None:
    space = symbolic_space()
    torch.manual_seed(0)
    plain = make_agent("nac", space)
    clipped = make_agent("nac", space, actor_count_clip=0.5)
    clipped.load_state_dict(plain.state_dict())
    with torch.no_grad():
        plain.cores["count"].counter_unit.W_hat.fill_(20.0)  # every count unit adds stimulus + 1 per step
        plain.cores["count"].counter_unit.M_hat.fill_(20.0)
        clipped.load_state_dict(plain.state_dict())
        obs, starts = counting_inputs(4, 3)
        logits, value, state = clipped(obs, starts, clipped.initial_state(3))
        plain_logits, plain_value, plain_state = plain(obs, starts, plain.initial_state(3))
        features = plain.feature_norm(plain.encoder(obs["grid"]))
        counts = torch.stack([torch.full((3, 8), 41.0 + t) for t in range(4)])
        expected_logits = plain.actor(torch.cat([features, counts.clamp(-0.5, 0.5)], -1))
    assert torch.equal(plain_state[-1], counts[-1])
    torch.testing.assert_close(logits, expected_logits, rtol=0, atol=0)
    assert not torch.allclose(logits, plain_logits)
    torch.testing.assert_close(value, plain_value, rtol=0, atol=0)
    for clipped_tensor, plain_tensor in zip(state, plain_state, strict=True):
        assert torch.equal(clipped_tensor, plain_tensor)


def test_actor_count_clip_defaults_to_off_and_must_not_be_negative() -> None:
    assert agent_wiring("nac").actor_count_clip == 0.0
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="actor_count_clip"):
            agent_wiring("nac", actor_count_clip=bad)
    older = agent_wiring("nac").to_dict()
    del older["actor_count_clip"]
    assert Wiring.from_dict(older) == agent_wiring("nac")
    assert Wiring.from_dict(agent_wiring("nac", actor_count_clip=2.0).to_dict()).actor_count_clip == 2.0


def test_the_gru_core_computes_torchs_gru_cell_with_its_weights() -> None:
    torch.manual_seed(4)
    for inputs in (("encoder", "stimulus"), ("count", "stimulus")):
        core = GRUCore(inputs, WIDTHS, WIDTHS["memory"], NAC)
        keeps = torch.ones(STEPS, BATCH, 1)
        keeps[2, 1] = 0.0
        state = random_state(core)
        with torch.no_grad():
            outputs, _ = run_core(core, state, keeps)
            sequence, h = sequence_signals(), state[0]
            for t in range(STEPS):
                x = torch.cat([step_signals(core, sequence, t)[name] for name in inputs], -1)
                h = core.gru_cell(x, h * keeps[t])
                torch.testing.assert_close(outputs[t], h, rtol=1e-5, atol=1e-6)


class _ReadsAtStepTime(Core):
    """A core that reads its input in `step` (the default `stepwise_inputs`): m_t = m_{t-1} / 2 + x_t."""

    def __init__(self) -> None:
        super().__init__(("encoder",), ("halving",), WIDTHS["encoder"])

    def step(self, prepared, signals, state, keep):
        halved = state[0] * keep / 2 + signals["encoder"]
        return halved, (halved,)


def test_a_core_that_reads_its_input_at_step_time_unrolls_as_it_steps() -> None:
    core, sequence = _ReadsAtStepTime(), sequence_signals()
    keep = torch.ones(STEPS, BATCH, 1)
    keep[2, 1] = 0
    state = random_state(core)
    outputs, (final,) = core.unroll(sequence, state, keep)
    stepped = state
    for t in range(STEPS):
        output, stepped = core.step(None, {"encoder": sequence["encoder"][t]}, stepped, keep[t])
        torch.testing.assert_close(outputs[t], output, rtol=0, atol=0)
    torch.testing.assert_close(final, stepped[0], rtol=0, atol=0)
    assert not torch.equal(outputs[-1], sequence["encoder"][-1])  # the state was carried
