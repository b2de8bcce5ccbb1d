"""The `nac` agent: its accumulator counts a delay down exactly and restarts each episode;
it reads normalised features and hides clipped counts from the actor."""

from __future__ import annotations

import pytest
import torch
from agent_inputs import observation_space, random_observations, slice_obs, warm_state

from nalu_rl.agents import ActorCritic, Wiring, agent_wiring, make_agent
from nalu_rl.agents.catalog import CATALOG_AGENT_NAMES

# The models here are tiny: one thread is faster than several competing for busy cores.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


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
    assert clipped == {"nau-saturated-count", "signed-count", "learned-count", "taught-count"}
    older = agent_wiring("nau-scalar-count").to_dict()
    del older["actor_count_clip"]
    assert Wiring.from_dict(older).actor_count_clip == 0.0
    with pytest.raises(ValueError, match="actor_count_clip"):
        agent_wiring("nau-scalar-count", actor_count_clip=-1.0)
    with pytest.raises(ValueError, match="actor_count_clip"):
        agent_wiring("lstm", actor_count_clip=10.0)
