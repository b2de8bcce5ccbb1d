"""The actor-critic agents: shapes, recurrence, resets, gradients, and an exact hand-set NAC count."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
import torch
from agent_inputs import (
    observation_space,
    random_observations,
    random_starts,
    slice_obs,
    warm_state,
)

from nalu_rl.agents import Wiring, agent_names, agent_wiring, describe_agents, make_agent

MODES = ("pixels", "symbolic")


# The models here are tiny: one thread is faster than several competing for busy cores.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", agent_names())
def test_output_shapes_for_every_agent_and_observation_mode(name: str, mode: str) -> None:
    space = observation_space(mode)
    model = make_agent(name, space, num_actions=5)
    steps, batch = 4, 3
    state = model.initial_state(batch)
    assert all(tensor.dtype == torch.float32 and tensor.shape[0] == batch for tensor in state)
    logits, value, next_state = model(
        random_observations(space, steps, batch), random_starts(steps, batch), state
    )
    assert logits.shape == (steps, batch, 5)
    assert value.shape == (steps, batch)
    assert [tensor.shape for tensor in next_state] == [tensor.shape for tensor in state]
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()
    named = model.describe_state(next_state)
    assert list(named) == list(model.state_names)
    wiring = model.wiring
    if wiring.has_memory:
        assert named[model.cores["memory"].state_names[0]].shape == (batch, wiring.memory_size)
    if wiring.counter == "linear-recurrence":
        assert named["lru_real"].shape == named["lru_imag"].shape == (batch, wiring.counter_size)
    # The counters whose states are named after what they hold.
    elif wiring.counter in ("event-counter", "change-counter", "change-counter-whole-steps", "value-count"):
        assert named[model.cores["count"].state_names[0]].shape == (batch, wiring.counter_size)
    elif wiring.counter == "feature-counts":  # a count per feature, then per learned event
        features = model.cores["count"].input_features
        assert named["feature_counts"].shape == (batch, features + wiring.counter_size)
    elif wiring.counter is not None:
        assert named[wiring.unit].shape == (batch, wiring.counter_size)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", agent_names())
def test_stepping_one_step_at_a_time_equals_sequence_forward(name: str, mode: str) -> None:
    space = observation_space(mode)
    model = make_agent(name, space)
    steps, batch = 6, 4
    obs, starts = random_observations(space, steps, batch), random_starts(steps, batch)
    initial = warm_state(model, space, batch)
    with torch.no_grad():
        logits, value, final_state = model(obs, starts, initial)
        state = initial
        for t in range(steps):
            step_logits, step_value, state = model(slice_obs(obs, slice(t, t + 1)), starts[t : t + 1], state)
            torch.testing.assert_close(step_logits[0], logits[t], rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(step_value[0], value[t], rtol=1e-5, atol=1e-5)
    for stepped, sequenced in zip(state, final_state, strict=True):
        torch.testing.assert_close(stepped, sequenced, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", agent_names())
def test_state_is_zeroed_exactly_where_an_episode_starts(name: str) -> None:
    space = observation_space("symbolic")
    model = make_agent(name, space)
    steps, batch, reset_at = 6, 2, 3
    obs = random_observations(space, steps, batch)
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[reset_at, 0] = True  # only episode 0 restarts, at step 3
    initial = warm_state(model, space, batch)
    with torch.no_grad():
        logits, value, _ = model(obs, starts, initial)
        fresh_logits, fresh_value, _ = model(
            slice_obs(obs, slice(reset_at, None)),
            torch.zeros(steps - reset_at, batch, dtype=torch.bool),
            model.initial_state(batch),
        )
        carried_logits, _, _ = model(slice_obs(obs, slice(None, reset_at)), starts[:reset_at], initial)
    # Episode 0 from step 3 on behaves as from the zero state; before step 3 it carried its state.
    torch.testing.assert_close(logits[reset_at:, 0], fresh_logits[:, 0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(value[reset_at:, 0], fresh_value[:, 0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(logits[:reset_at], carried_logits, rtol=1e-5, atol=1e-6)
    # Episode 1 had no start: its state was not zeroed, so its outputs differ from a zero-state run.
    assert not torch.allclose(value[reset_at:, 1], fresh_value[:, 1], atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", agent_names())
def test_gradients_reach_every_parameter(name: str, mode: str) -> None:
    space = observation_space(mode)
    torch.manual_seed(0)
    model = make_agent(name, space)
    steps, batch = 5, 6
    logits, value, state = model(
        random_observations(space, steps, batch), random_starts(steps, batch), warm_state(model, space, batch)
    )
    weights = torch.randn(steps, batch, 5, generator=torch.Generator().manual_seed(3))
    (logits * weights).sum().backward(retain_graph=True)
    # A student head (taught-count) learns from its imitation of the teacher while the teacher acts.
    (value.sum() + model.auxiliary_loss(torch.ones(steps, batch))).backward()
    for parameter_name, parameter in model.named_parameters():
        assert parameter.grad is not None, f"{parameter_name} got no gradient"
        assert parameter.grad.abs().sum() > 0, f"{parameter_name} got an all-zero gradient"


def test_model_pickles_and_its_weights_rebuild_the_same_agent() -> None:
    space = observation_space("pixels")
    model = make_agent("nac", space)
    obs, starts = random_observations(space, 3, 2), random_starts(3, 2)
    with torch.no_grad():
        expected, _, _ = model(obs, starts, model.initial_state(2))
        unpickled = pickle.loads(pickle.dumps(model))
        rebuilt = make_agent("nac", space)
        rebuilt.load_state_dict(model.state_dict())
        for other in (unpickled, rebuilt.to("cpu")):
            logits, _, _ = other(obs, starts, other.initial_state(2))
            torch.testing.assert_close(logits, expected)


def test_regularizer_sums_the_units_regularizers() -> None:
    space = observation_space("symbolic")
    assert make_agent("lstm", space).regularizer().item() == 0.0
    assert make_agent("nac", space).regularizer().item() == 0.0
    nau_agent = make_agent("nau", space)
    regularizer = nau_agent.regularizer()
    assert regularizer.item() > 0.0
    torch.testing.assert_close(regularizer, nau_agent.cores["count"].counter_unit.regularizer())
    regularizer.backward()
    assert nau_agent.cores["count"].counter_unit.W.grad.abs().sum() > 0


def test_options_override_the_wiring_sizes() -> None:
    model = make_agent(
        "nac-paper", observation_space("symbolic"), num_actions=3, memory_size=16, counter_size=2
    )
    state = model.initial_state(4)
    assert [tensor.shape for tensor in state] == [(4, 16), (4, 16), (4, 2)]
    logits, _, _ = model(random_observations(observation_space("symbolic"), 2, 4), random_starts(2, 4), state)
    assert logits.shape == (2, 4, 3)


def test_unknown_agent_or_option_raises_value_error_naming_it() -> None:
    space = observation_space("symbolic")
    with pytest.raises(ValueError, match="no-such-agent"):
        make_agent("no-such-agent", space)
    with pytest.raises(ValueError, match="lstm_width"):
        make_agent("lstm", space, lstm_width=3)
    with pytest.raises(ValueError, match="actor_inputs"):
        make_agent("lstm", space, actor_inputs=("nonsense",))
    with pytest.raises(ValueError, match="no counter"):
        make_agent("lstm", space, actor_inputs=("count",))


def test_registry_names_the_required_agents_and_nac_is_an_lstm_with_an_accumulator() -> None:
    for required in ("lstm", "nac", "nalu", "nau", "nac-ff", "nac-paper", "nac-critic-lstm"):
        assert required in agent_names()
    descriptions = describe_agents()
    assert all(descriptions[name] for name in agent_names())
    nac = agent_wiring("nac")
    assert nac.has_memory and nac.counter == "accumulator" and nac.unit == "nac"
    assert agent_wiring("nalu").unit == "nalu" and agent_wiring("nau").unit == "nau"
    assert not agent_wiring("nac-ff").has_memory
    # the paper-literal wiring: a recurrent NAC beside the LSTM, both reaching both heads
    paper = agent_wiring("nac-paper")
    assert paper.counter == "recurrent" and {"memory", "count"} <= set(paper.actor_inputs)
    assert {"memory", "count"} <= set(paper.critic_inputs)


def test_pixels_are_scaled_inside_the_model() -> None:
    space = observation_space("pixels")
    model = make_agent("lstm", space)
    pixels = torch.full((1, 1, 56, 56, 3), 255, dtype=torch.uint8)
    features = model.encoder(pixels)
    reference_input = torch.ones(1, 3, 56, 56)
    expected = model.encoder.fully_connected(model.encoder.convolutions(reference_input))
    torch.testing.assert_close(features.reshape(1, -1), expected)


@pytest.mark.parametrize("name", agent_names())
def test_wiring_round_trips_through_plain_values(name: str) -> None:
    wiring = agent_wiring(name)
    plain = wiring.to_dict()
    assert all(not isinstance(value, tuple) for value in plain.values())
    assert Wiring.from_dict(plain) == wiring


def test_wiring_from_unknown_fields_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wiring fields"):
        Wiring.from_dict({**agent_wiring("nac").to_dict(), "lstm_layers": 2})


def test_feature_norm_makes_the_heads_blind_to_the_scale_of_the_encoder_features() -> None:
    space = observation_space("pixels")
    obs = random_observations(space, 4, 3)
    starts = random_starts(4, 3)

    def relative_change(before: torch.Tensor, after: torch.Tensor) -> float:
        return float((after - before).abs().max() / before.abs().max())

    for feature_norm in (True, False):
        torch.manual_seed(0)
        model = make_agent("nac-critic-lstm", space, feature_norm=feature_norm)
        with torch.no_grad():
            logits, value, _ = model(obs, starts, model.initial_state(3))
            model.encoder.fully_connected[0].weight.mul_(50.0)
            model.encoder.fully_connected[0].bias.mul_(50.0)
            scaled_logits, scaled_value, _ = model(obs, starts, model.initial_state(3))
        changes = (relative_change(logits, scaled_logits), relative_change(value, scaled_value))
        if feature_norm:
            assert max(changes) < 0.01
        else:
            assert min(changes) > 0.1


@pytest.mark.parametrize("detached", [False, True])
def test_a_detached_critic_trains_its_head_alone(detached: bool) -> None:
    torch.manual_seed(0)
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    model = make_agent("lstm", space, 3, critic_detached=detached, critic_hidden=8)
    obs = {"observation": torch.randn(5, 2, 4)}
    logits, value, _ = model(obs, torch.zeros(5, 2, dtype=torch.bool), model.initial_state(2))
    value.sum().backward()
    moved = parts_with_gradients(model)
    assert moved == ({"critic"} if detached else {"critic", "encoder", "cores"})
    model.zero_grad(set_to_none=True)
    logits, value, _ = model(obs, torch.zeros(5, 2, dtype=torch.bool), model.initial_state(2))
    logits.sum().backward()  # the policy still trains the encoder and the LSTM
    assert parts_with_gradients(model) == {
        "actor",
        "encoder",
        "cores",
    }


@pytest.mark.parametrize("memory_core", ["lstm", "gru"])
def test_a_separate_critic_has_weights_and_state_of_its_own(memory_core: str) -> None:
    torch.manual_seed(0)
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    model = make_agent("lstm", space, 3, critic_separate=True, memory_core=memory_core, critic_hidden=8)
    core_names = model.cores["memory"].state_names
    assert model.state_names == core_names + tuple("critic_" + name for name in core_names)
    obs, starts = assert_the_value_moves_the_critic_alone(model)
    assert all(weight.grad.abs().sum() > 0 for weight in model.critic.encoder.parameters())
    model.zero_grad(set_to_none=True)
    logits, value, _ = model(obs, starts, model.initial_state(2))
    logits.sum().backward()
    moved = parts_with_gradients(model)
    assert moved == {"actor", "encoder", "cores"}
    # Stepping one step at a time carries the critic's state as the whole sequence does.
    with torch.no_grad():
        _, whole, _ = model(obs, starts, model.initial_state(2))
        state, stepped = model.initial_state(2), []
        for t in range(6):
            _, step_value, state = model(
                {"observation": obs["observation"][t : t + 1]}, starts[t : t + 1], state
            )
            stepped.append(step_value)
    torch.testing.assert_close(torch.cat(stepped), whole, rtol=1e-4, atol=1e-5)


def test_a_separate_critic_needs_a_memory_core_and_no_count() -> None:
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    for options in (
        {"memory_inputs": (), "actor_inputs": ("encoder",), "critic_inputs": ("encoder",)},
        {"critic_detached": True},
    ):
        with pytest.raises(ValueError, match="critic_separate"):
            make_agent("lstm", space, 3, critic_separate=True, **options)


def test_a_separate_critic_without_a_core_reads_the_actors_memory_without_moving_it() -> None:
    torch.manual_seed(0)
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    model = make_agent(
        "lstm", space, 3, critic_separate=True, critic_own_memory=False, critic_inputs=("encoder", "memory")
    )
    assert model.state_names == model.cores["memory"].state_names  # one LSTM to step, not two
    assert_the_value_moves_the_critic_alone(model)
    # The head reads the actor's h: its weights on it get a gradient.
    head_weight = model.critic.head[-1].weight
    assert head_weight.grad[:, -model.wiring.memory_size :].abs().sum() > 0


def parts_with_gradients(model: torch.nn.Module) -> set[str]:
    """The model's top-level parts (actor, critic, encoder, cores, ...) whose parameters got a gradient."""
    return {name.split(".")[0] for name, weight in model.named_parameters() if weight.grad is not None}


def assert_the_value_moves_the_critic_alone(model: torch.nn.Module) -> tuple[dict, torch.Tensor]:
    """Run 6 steps of 2 envs of a 4-wide Box observation, backpropagate the value and check that only
    the critic got a gradient; returns the observations and episode starts it used."""
    obs = {"observation": torch.randn(6, 2, 4)}
    starts = torch.zeros(6, 2, dtype=torch.bool)
    _, value, state = model(obs, starts, model.initial_state(2))
    assert len(state) == len(model.state_names)
    value.sum().backward()
    assert parts_with_gradients(model) == {"critic"}
    return obs, starts
