"""The actor-critic agents: shapes, recurrence, resets, gradients, and an exact hand-set NAC count."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from gymnasium import spaces

from nalu_rl.agents import ActorCritic, Wiring, agent_names, agent_wiring, describe_agents, make_agent
from nalu_rl.agents.catalog import CATALOG_AGENT_NAMES

MAX_DELAY = 1000
GRID_SIZE = 5


def observation_space(mode: str) -> spaces.Dict:
    """The TimeTrack observation space for obs mode "pixels" or "symbolic"."""
    stimulus = spaces.Box(0, MAX_DELAY, (1,), np.float32)
    if mode == "pixels":
        return spaces.Dict({"pixels": spaces.Box(0, 255, (56, 56, 3), np.uint8), "stimulus": stimulus})
    return spaces.Dict({"grid": spaces.Box(0, 1, (2, GRID_SIZE, GRID_SIZE), np.uint8), "stimulus": stimulus})


def random_observations(space: spaces.Dict, steps: int, batch: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """[steps, batch] observations: random images or grids, a stimulus of 1..40 at random steps, else 0."""
    generator = torch.Generator().manual_seed(seed)
    obs = {}
    if "pixels" in space.spaces:
        obs["pixels"] = torch.randint(
            0, 256, (steps, batch, 56, 56, 3), dtype=torch.uint8, generator=generator
        )
    else:
        obs["grid"] = torch.randint(0, 2, (steps, batch, 2, GRID_SIZE, GRID_SIZE), generator=generator).to(
            torch.uint8
        )
    onset = torch.rand(steps, batch, 1, generator=generator) < 0.3
    delays = torch.randint(1, 41, (steps, batch, 1), generator=generator).float()
    obs["stimulus"] = torch.where(onset, delays, torch.zeros_like(delays))
    return obs


def random_starts(steps: int, batch: int, seed: int = 1) -> torch.Tensor:
    """A bool [steps, batch] episode-start mask with starts scattered at random steps."""
    return torch.rand(steps, batch, generator=torch.Generator().manual_seed(seed)) < 0.25


def warm_state(model: ActorCritic, space: spaces.Dict, batch: int) -> tuple[torch.Tensor, ...]:
    """A non-zero recurrent state: the state after a few steps from the zero state."""
    obs = random_observations(space, 3, batch, seed=99)
    with torch.no_grad():
        _, _, state = model(obs, torch.zeros(3, batch, dtype=torch.bool), model.initial_state(batch))
    return state


def slice_obs(
    obs: dict[str, torch.Tensor], times: slice, batch: slice = slice(None)
) -> dict[str, torch.Tensor]:
    return {key: value[times, batch] for key, value in obs.items()}


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
    elif wiring.counter in ("event-counter", "value-count"):  # states named after what they hold
        assert named[model.cores["count"].state_names[0]].shape == (batch, wiring.counter_size)
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
    value.sum().backward()
    for parameter_name, parameter in model.named_parameters():
        assert parameter.grad is not None, f"{parameter_name} got no gradient"
        assert parameter.grad.abs().sum() > 0, f"{parameter_name} got an all-zero gradient"


def hand_set_countdown(model: ActorCritic) -> None:
    """Set the counter's first unit to add +1 x stimulus - 1 x bias per step, exactly, all others to 0."""
    wiring = model.wiring
    assert wiring.counter == "accumulator" and wiring.unit == "nac"
    unit = model.cores["count"].counter_unit
    with torch.no_grad():
        unit.W_hat.zero_()
        unit.M_hat.fill_(20.0)  # sigmoid(20) rounds to exactly 1.0 in float32, as does tanh(20)
        unit.W_hat[0, wiring.counter_inputs.index("stimulus")] = 20.0
        unit.W_hat[0, wiring.counter_inputs.index("bias")] = -20.0
    weight = unit.weight
    assert weight[0, wiring.counter_inputs.index("stimulus")].item() == 1.0
    assert weight[0, wiring.counter_inputs.index("bias")].item() == -1.0


def test_nac_agent_counts_down_delay_exactly_up_to_1000_steps() -> None:
    """With hand-set NAC weights the `nac` agent's count after observation t is T - t - 1 exactly.

    T - t - 1 is the number of actions still to come after the one chosen at observation t, so the
    count reaches 0 at the observation where the arriving action is due (t = T - 1), for any T.
    Each batch entry is one episode (delay T) that starts late enough to end at observation t on
    the last step of the sequence, so one forward pass checks many (T, t) pairs.
    """
    space = observation_space("symbolic")
    model = make_agent("nac", space)
    hand_set_countdown(model)
    pairs = [
        (delay, t)
        for delay in (1, 5, 12, 40, 333, 1000)
        for t in sorted({0, 1, delay - 2, delay - 1, delay, delay + 1, 500, 999, 1004})
        if t >= 0
    ]
    delays = torch.tensor([float(delay) for delay, _ in pairs])
    elapsed = torch.tensor([t for _, t in pairs])
    batch, steps = len(pairs), int(elapsed.max()) + 1
    onsets = steps - 1 - elapsed  # the step at which each episode starts
    obs = random_observations(space, steps, batch)
    obs["stimulus"] = torch.zeros(steps, batch, 1)
    obs["stimulus"][onsets, torch.arange(batch), 0] = delays  # T at onset only, as in the environment
    starts = torch.zeros(steps, batch, dtype=torch.bool)
    starts[onsets, torch.arange(batch)] = True
    state = warm_state(model, space, batch)  # each start must clear whatever count was there
    with torch.no_grad():
        for chunk in range(0, steps, 400):  # several calls: the count must carry across them
            times = slice(chunk, min(chunk + 400, steps))
            _, _, state = model(slice_obs(obs, times), starts[times], state)
    counts = model.describe_state(state)["nac"][:, 0]
    assert torch.equal(counts, delays - elapsed - 1)
    arriving = elapsed == delays.long() - 1
    assert arriving.sum() == 6 and torch.equal(counts[arriving], torch.zeros(6))


def test_nac_count_restarts_at_each_episode_start() -> None:
    space = observation_space("symbolic")
    model = make_agent("nac", space)
    hand_set_countdown(model)
    steps = 12
    obs = random_observations(space, steps, 1)
    obs["stimulus"] = torch.zeros(steps, 1, 1)
    obs["stimulus"][0, 0, 0], obs["stimulus"][7, 0, 0] = 30.0, 4.0
    starts = torch.zeros(steps, 1, dtype=torch.bool)
    starts[0, 0] = starts[7, 0] = True
    with torch.no_grad():
        _, _, state = model(obs, starts, model.initial_state(1))
    # second episode: stimulus 4 at step 7, then 4 more steps (8..11): 4 - 4 - 1 = -1
    assert model.describe_state(state)["nac"][0, 0].item() == -1.0


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


def test_hand_set_nac_agent_counts_down_on_the_real_environment() -> None:
    """On TimeTrack itself (stimulus at onset), the hand-set count is T - t - 1 at every observation."""
    import gymnasium

    import nalu_rl.envs  # noqa: F401  (registers the environment)

    env = gymnasium.make("nalu_rl/TimeTrack-v0", obs_mode="symbolic")
    model = make_agent("nac", env.observation_space)
    hand_set_countdown(model)
    state = model.initial_state(1)
    pass_action = 4  # staying put never arrives, so each episode runs on to its timeout
    for episode, delay in enumerate((3, 17, 60)):
        observation, info = env.reset(seed=episode, options={"delay": delay})
        starting, terminated = True, False
        while not terminated:
            batch = {key: torch.as_tensor(value)[None, None] for key, value in observation.items()}
            with torch.no_grad():
                _, _, state = model(batch, torch.tensor([[starting]]), state)
            assert model.describe_state(state)["nac"][0, 0].item() == delay - info["t"] - 1
            observation, _, terminated, _, info = env.step(pass_action)
            starting = False
        assert info["t"] > delay


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


def test_nac_normalises_its_features_and_checkpoints_without_the_field_load_without_it() -> None:
    assert agent_wiring("nac").feature_norm and agent_wiring("nau").feature_norm
    assert not agent_wiring("lstm").feature_norm
    older = agent_wiring("nac").to_dict()
    del older["feature_norm"]
    assert not Wiring.from_dict(older).feature_norm


def test_actor_count_clip_hides_counts_beyond_the_clip_from_the_actor_only() -> None:
    space = observation_space("symbolic")
    torch.manual_seed(0)
    model = make_agent("nau-saturated-count", space)
    assert model.wiring.actor_count_clip == 10.0
    with torch.no_grad():
        model.cores["count"].counter_unit.W.copy_(torch.tensor([[1.0, -1.0]]))  # count after the onset: T - 1
    delays = torch.tensor([3.0, 6.0, 11.0, 12.0, 50.0, 1000.0])  # counts 2, 5, 10, 11, 49, 999
    obs = random_observations(space, 1, 1)
    obs = {"grid": obs["grid"].expand(1, len(delays), -1, -1, -1), "stimulus": delays.view(1, -1, 1)}
    starts = torch.ones(1, len(delays), dtype=torch.bool)
    with torch.no_grad():
        logits, value, state = model(obs, starts, model.initial_state(len(delays)))
    assert torch.equal(model.describe_state(state)["nau"][:, 0], delays - 1)  # the state is not clipped
    logits = logits[0]
    for beyond in (3, 4, 5):  # counts 11, 49 and 999 read as 10
        assert torch.equal(logits[beyond], logits[2])
    assert not torch.allclose(logits[0], logits[1]) and not torch.allclose(logits[1], logits[2])
    assert len(set(value[0].tolist())) == len(delays)  # the critic reads the count unclipped


def test_actor_count_clip_is_off_by_default_and_validated() -> None:
    # The catalog's own agents: an example module another test imported may have registered more.
    clipped = {name for name in CATALOG_AGENT_NAMES if agent_wiring(name).actor_count_clip}
    assert clipped == {"nau-saturated-count", "signed-count", "learned-count"}
    older = agent_wiring("nau-scalar-count").to_dict()
    del older["actor_count_clip"]
    assert Wiring.from_dict(older).actor_count_clip == 0.0
    with pytest.raises(ValueError, match="actor_count_clip"):
        agent_wiring("nau-scalar-count", actor_count_clip=-1.0)
    with pytest.raises(ValueError, match="actor_count_clip"):
        agent_wiring("lstm", actor_count_clip=10.0)
