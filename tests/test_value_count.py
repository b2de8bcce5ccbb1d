"""The value-count agent: a count per learned value (`ValueCountCore`), the count the observation asks
for, and an actor that reads a count as the index of its answer (`CountAsAction`); built for POPGym's
Count Recall and for any other env."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

from nalu_rl import train
from nalu_rl.agents import ActorCritic, Wiring, agent_wiring, make_agent
from nalu_rl.agents.count_action import CountAsAction
from nalu_rl.agents.distributions import greedy
from nalu_rl.agents.encoders import MLPEncoder
from nalu_rl.agents.flat_encoder import FlatEncoder, build_flat_encoder
from nalu_rl.agents.value_count import ValueCountCore
from nalu_rl.units.one_hot_gate import OneHotGate, straight_through_one_hot

# Count Recall's three difficulties as POPGym 1.0.x declares them: (dealt, asked) values, answers, steps.
COUNT_RECALL = {
    "Easy": (gymnasium.spaces.MultiDiscrete([2, 2]), 27, 51),
    "Medium": (gymnasium.spaces.MultiDiscrete([4, 4]), 27, 103),
    "Hard": (gymnasium.spaces.MultiDiscrete([13, 13]), 17, 207),
}


# The models here are tiny: one thread is faster than several competing for busy cores.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_a_one_hot_gate_gives_exactly_one_event_a_step_with_the_softmaxs_gradient() -> None:
    torch.manual_seed(0)
    gate = OneHotGate(5, 4)
    x = torch.randn(100, 5)
    events = gate(x)
    assert set(events.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(events.sum(-1), torch.ones(100))
    assert torch.equal(events.argmax(-1), gate.pre_activation(x).argmax(-1))
    logits = torch.randn(3, 4, requires_grad=True)
    weights = torch.randn(3, 4)
    (straight_through_one_hot(logits) * weights).sum().backward()
    soft_logits = logits.detach().clone().requires_grad_(True)
    (soft_logits.softmax(-1) * weights).sum().backward()
    torch.testing.assert_close(logits.grad, soft_logits.grad)


def _core(width: int = 6, size: int = 4) -> ValueCountCore:
    return ValueCountCore(("encoder",), {"encoder": width}, size, agent_wiring("value-count"))


def test_the_counts_stay_exact_integers_over_1000_steps_and_past_bfloat16s_256() -> None:
    torch.manual_seed(0)
    core = _core()
    steps, batch = 1000, 3
    features = torch.randn(steps, batch, 6)
    keep = torch.ones(steps, batch, 1)
    keep[400, 1] = 0.0  # episode 1 starts again at step 400
    with torch.no_grad():
        core.event_gate.linear.bias[0] = 3.0  # most steps count in slot 0: counts far beyond 256
        expected_events = torch.nn.functional.one_hot(core.event_gate.pre_activation(features).argmax(-1), 4)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            output, (final,) = core.unroll({"encoder": features}, core.initial_state(batch), keep)
    counts = output[..., 1:]
    assert counts.dtype == torch.float32
    assert torch.equal(counts, counts.round())
    expected = expected_events.double().cumsum(0)
    expected[400:, 1] -= expected[399, 1]
    assert torch.equal(counts.double(), expected)
    assert counts[-1, 0].max() > 256
    assert torch.equal(counts.sum(-1)[-1], torch.tensor([1000.0, 600.0, 1000.0]))
    # Step by step, in chunks of any length, from the carried state: the same counts.
    state, stepped = core.initial_state(batch), []
    with torch.no_grad():
        for start in range(0, steps, 250):
            chunk = slice(start, start + 250)
            chunk_output, state = core.unroll({"encoder": features[chunk]}, state, keep[chunk])
            stepped.append(chunk_output)
    assert torch.equal(torch.cat(stepped), output) and torch.equal(state[0], final)


def hand_set_count_recall(model: ActorCritic, values: int) -> None:
    """The flat encoder's features are [one-hot of the dealt card, one-hot of the asked card, 0, ...]:
    slot v counts the cards of value v; the read takes slot v where value v is asked (sigmoid(5) = 0.993
    and sigmoid(-5) = 0.007, snapped to 1 and 0); the actor's own head says nothing."""
    core = model.cores["count"]
    with torch.no_grad():
        for gate in (core.event_gate.linear, core.read_gate):
            gate.weight.zero_()
            gate.bias.zero_()
        for value in range(values):
            core.event_gate.linear.weight[value, value] = 1.0
            core.read_gate.weight[value, values + value] = 10.0
        core.read_gate.bias.fill_(-5.0)
        model.actor[-1].weight.zero_()
        model.actor[-1].bias.zero_()


@pytest.mark.parametrize("difficulty", list(COUNT_RECALL))
def test_with_its_gates_set_by_hand_it_reads_the_asked_values_count_and_answers_every_query(
    difficulty: str,
) -> None:
    space, answers, _ = COUNT_RECALL[difficulty]
    model = make_agent("value-count", space, answers)
    hand_set_count_recall(model, int(space.nvec[0]))
    assert_answers_every_query(model, difficulty, "value_counts", seed=7)


def act_on_sampled_observations(
    model: ActorCritic, actions, steps: int, batch: int
) -> dict[str, torch.Tensor]:
    """Run the model on `steps` x `batch` observations sampled from its space; check that the logits
    (one per action, or per component's action) and the values are finite and of their shapes; return
    the named state after the last step."""
    obs = {key: torch.as_tensor(np.stack([[entry.sample() for _ in range(batch)] for _ in range(steps)]))
           for key, entry in model.observation_space.spaces.items()}  # fmt: skip
    logits, value, state = model(obs, torch.zeros(steps, batch, dtype=torch.bool), model.initial_state(batch))
    width = actions if isinstance(actions, int) else sum(actions)
    assert logits.shape == (steps, batch, width) and value.shape == (steps, batch)
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()
    return model.describe_state(state)


def assert_answers_every_query(model: ActorCritic, difficulty: str, state_name: str, seed: int) -> None:
    """Play one episode of Count Recall at `difficulty` greedily: the state `state_name` begins with the
    exact count of each dealt value at every step, and every answer is right (return 1.0)."""
    popgym = pytest.importorskip("popgym")
    space, answers, steps = COUNT_RECALL[difficulty]
    env = getattr(popgym.envs.count_recall, f"CountRecall{difficulty}")()
    assert (env.observation_space, env.action_space.n, env.max_episode_length) == (space, answers, steps)
    values = int(space.nvec[0])
    observation, info = env.reset(seed=seed)
    state, start, episode_return, taken = model.initial_state(1), True, 0.0, 0
    while True:
        with torch.no_grad():
            logits, _, state = model(
                {"observation": torch.as_tensor(observation)[None, None]}, torch.tensor([[start]]), state
            )
        counts = model.describe_state(state)[state_name][0]
        assert torch.equal(counts[:values], torch.as_tensor(info["counts"], dtype=torch.float32))
        action = int(greedy(logits[0, 0], answers))
        assert action == info["counts"][observation[1]]
        observation, reward, terminated, truncated, info = env.step(action)
        episode_return, taken, start = episode_return + reward, taken + 1, False
        if terminated or truncated:
            break
    assert taken == steps and episode_return == pytest.approx(1.0)


def test_the_read_is_the_count_of_the_slots_it_selects_and_exact_once_snapped() -> None:
    core = _core(width=4, size=3)
    counts = torch.tensor([[5.0, 7.0, 11.0]])
    read_logits = torch.tensor([[8.0, -8.0, 8.0]])  # sigmoid 0.9997 and 0.0003: snapped to 1 and 0
    assert core._read(read_logits, counts)[0].tolist() == [16.0, 5.0, 7.0, 11.0]
    undecided = core._read(torch.tensor([[0.0, -8.0, -8.0]]), counts)[0, 0]
    assert undecided.item() == pytest.approx(2.5)  # a read of 1/2 is not snapped: half of slot 0


@pytest.mark.parametrize("action_sizes", [27, 17, (3, 5)])
def test_a_count_reads_as_the_action_of_its_index_for_every_count(action_sizes) -> None:
    head = CountAsAction(action_sizes)
    sizes = [action_sizes] if isinstance(action_sizes, int) else list(action_sizes)
    counts = torch.arange(max(sizes), dtype=torch.float32)[:, None]
    answers = greedy(head(counts), action_sizes)
    expected = torch.stack([counts[:, 0].clamp(max=size - 1).long() for size in sizes], -1)
    assert torch.equal(answers.reshape(expected.shape), expected)
    logits = head(torch.tensor([[1.0]]))[0, : sizes[0]].tolist()  # the first component's
    assert head.scale.item() == pytest.approx(1.0) and logits[:3] == pytest.approx([-1.0, 0.0, -1.0])
    with torch.no_grad():
        head.scale_logit.fill_(50.0)  # however far training pushes it, s stays below MAX_SCALE
    assert head.scale.item() <= CountAsAction.MAX_SCALE


@pytest.mark.parametrize(
    ("space", "actions"),
    [
        *((space, answers) for space, answers, _ in COUNT_RECALL.values()),
        (gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32), 2),
        (gymnasium.spaces.Dict({"image": gymnasium.spaces.Box(0, 255, (24, 24, 3), np.uint8)}), (3, 4)),
    ],
    ids=["easy", "medium", "hard", "box", "image-multidiscrete-actions"],
)
def test_the_agent_builds_and_acts_on_count_recall_and_on_other_observations(space, actions) -> None:
    torch.manual_seed(0)
    model = make_agent("value-count", space, actions)
    state = act_on_sampled_observations(model, actions, steps=5, batch=2)
    assert state["value_counts"].sum(-1).tolist() == [5] * 2


@pytest.mark.parametrize(
    ("env_id", "mmer"), [("popgym-CountRecallEasy-v0", True), ("CartPole-v1", False)], ids=["popgym", "box"]
)
@pytest.mark.parametrize("agent", ["value-count", "count-mixture"])
def test_a_training_run_updates_it_on_count_recall_and_on_a_box_env(
    agent: str, env_id: str, mmer: bool, tmp_path: Path, capsys
) -> None:
    if mmer:
        pytest.importorskip("popgym")
    argv = ["--import", "popgym"] if mmer else []
    argv += ["--env-id", env_id, "--agent", agent, "--actors", "0", "--envs-per-actor", "8"]
    argv += ["--total-steps", "640", "--eval-episodes", "0", "--no-progress", "--logdir", str(tmp_path)]
    assert train.main(argv) == 0
    err = capsys.readouterr().err
    assert "0 updates skipped" in err
    assert any(line.startswith("MMER: ") for line in err.splitlines()) is mmer


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"counter_size": 1}, "2 or more counts"),
        ({"counter_inputs": ("bias",)}, "reads 'encoder'"),
        ({"counter_inputs": ("encoder", "memory"), "memory_inputs": ("encoder",)}, "reads 'encoder'"),
    ],
)
def test_the_value_counter_refuses_a_configuration_it_cannot_count_with(options: dict, message: str) -> None:
    space, answers, _ = COUNT_RECALL["Easy"]
    with pytest.raises(ValueError, match=message):
        make_agent("value-count", space, answers, **options)


def test_the_flat_encoder_passes_the_values_and_gives_wider_entries_autos_encoder() -> None:
    encoder = build_flat_encoder(gymnasium.spaces.Box(0.0, 1.0, (2, 2), np.float32), 6)
    assert isinstance(encoder, FlatEncoder) and not list(encoder.parameters())
    features = encoder(torch.tensor([[[1, 2], [3, 4]]]))
    assert features.dtype == torch.float32 and features.tolist() == [[1.0, 2.0, 3.0, 4.0, 0.0, 0.0]]
    assert isinstance(build_flat_encoder(gymnasium.spaces.Box(0.0, 1.0, (7,), np.float32), 6), MLPEncoder)
    with pytest.raises(ValueError, match="7 values does not fit 6 features"):
        FlatEncoder((7,), 6)


def test_count_as_action_needs_a_counter_and_is_off_for_the_other_agents() -> None:
    with pytest.raises(ValueError, match="count_as_action .* no counter"):
        agent_wiring("lstm", count_as_action=True)
    older = agent_wiring("nac").to_dict()
    del older["count_as_action"]  # a wiring stored before the option existed
    assert Wiring.from_dict(older).count_as_action is False
    assert Wiring.from_dict(agent_wiring("value-count").to_dict()).count_as_action is True
