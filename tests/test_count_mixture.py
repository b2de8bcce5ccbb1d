"""The count-mixture agent: an exact count of every input feature and of learned events
(`FeatureCountsCore`), and a policy that is a mixture over its head's own and each count read as an
answer (`CountMixture`); built for POPGym's Count Recall and for any other env."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from test_value_count import COUNT_RECALL, act_on_sampled_observations, assert_answers_every_query

from nalu_rl import train
from nalu_rl.agents import ActorCritic, Wiring, agent_wiring, make_agent
from nalu_rl.agents.count_mixture import CountMixture
from nalu_rl.agents.distributions import greedy, log_prob
from nalu_rl.agents.flat_encoder import FlatEncoder
from nalu_rl.agents.value_count import FeatureCountsCore

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_mixture_is_a_policy_per_action_component_and_each_part_can_take_it_alone() -> None:
    torch.manual_seed(0)
    mixture = CountMixture(query_width=3, counts=2, action_sizes=(4, 6))
    query, counts, head_logits = torch.randn(5, 3), torch.tensor([[2.0, 5.0]] * 5), torch.randn(5, 10)
    log_policy = mixture(query, counts, head_logits)
    assert log_policy.shape == (5, 10)
    torch.testing.assert_close(log_policy[:, :4].exp().sum(-1), torch.ones(5))
    torch.testing.assert_close(log_policy[:, 4:].exp().sum(-1), torch.ones(5))
    # At the start the head's policy has half the weight, the counts a quarter each.
    torch.testing.assert_close(mixture.weights(torch.zeros(1, 3)), torch.tensor([[0.5, 0.25, 0.25]]))
    with torch.no_grad():
        mixture.query.weight.zero_()
        mixture.query.bias.copy_(torch.tensor([30.0, 0.0, 0.0]))  # the head's alone
    head_alone = torch.cat([head_logits[:, :4].log_softmax(-1), head_logits[:, 4:].log_softmax(-1)], -1)
    torch.testing.assert_close(mixture(query, counts, head_logits), head_alone)
    with torch.no_grad():
        mixture.query.bias.copy_(torch.tensor([0.0, 0.0, 30.0]))  # the count 5 alone
    answers = greedy(mixture(query, counts, head_logits), (4, 6))
    assert answers.tolist() == [[3, 5]] * 5  # 5 is past the first component's last action: its nearest


def test_a_rewarded_answer_raises_the_weight_of_the_counts_that_proposed_it_and_lowers_the_others() -> None:
    mixture = CountMixture(query_width=1, counts=3, action_sizes=27)
    counts = torch.tensor([[4.0, 9.0, 4.0]])
    log_policy = mixture(torch.zeros(1, 1), counts, torch.zeros(1, 27))
    log_prob(log_policy, torch.tensor([4]), 27).sum().backward()  # the answer 4 was rewarded
    bias_gradient = mixture.query.bias.grad
    assert bias_gradient[1] > 0 and bias_gradient[3] > 0  # the two counts of 4
    assert bias_gradient[2] < 0 and bias_gradient[0] < 0  # the count of 9, and the head's uniform policy


def test_the_feature_counts_are_exact_per_feature_and_per_event_and_reset_where_an_episode_starts() -> None:
    torch.manual_seed(0)
    core = FeatureCountsCore(("encoder",), {"encoder": 4}, 3, agent_wiring("count-mixture"))
    assert core.output_size == 7
    steps, batch = 600, 2
    features = torch.nn.functional.one_hot(torch.randint(0, 4, (steps, batch)), 4).float()
    keep = torch.ones(steps, batch, 1)
    keep[300, 1] = 0.0
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        counts, (final,) = core.unroll({"encoder": features}, core.initial_state(batch), keep)
    expected = features.cumsum(0)
    expected[300:, 1] -= expected[299, 1]
    assert counts.dtype == torch.float32 and torch.equal(counts[..., :4], expected)
    assert torch.equal(counts[..., 4:].sum(-1), expected.sum(-1))  # one learned event a step
    assert counts[-1, 0].sum() == 1200 and torch.equal(final, counts[-1])
    state, stepped = core.initial_state(batch), []
    with torch.no_grad():
        prepared = core.prepare({"encoder": features})
        for t in range(steps):
            output, state = core.step(prepared[t], {}, state, keep[t])
            stepped.append(output)
    assert torch.equal(torch.stack(stepped), counts)


def hand_set_count_recall(model: ActorCritic, values: int) -> None:
    """The features are [one-hot of the dealt card, one-hot of the asked card]; the counts begin with
    theirs, so count v is how many cards of value v were dealt: the query gives count v all the weight
    where value v is asked."""
    query = model.count_mixture.query
    with torch.no_grad():
        query.weight.zero_()
        query.bias.zero_()
        for value in range(values):
            query.weight[1 + value, values + value] = 40.0


@pytest.mark.parametrize("difficulty", list(COUNT_RECALL))
def test_with_its_query_set_by_hand_it_answers_every_query_of_count_recall(difficulty: str) -> None:
    space, answers, _ = COUNT_RECALL[difficulty]
    model = make_agent("count-mixture", space, answers)
    hand_set_count_recall(model, int(space.nvec[0]))
    assert_answers_every_query(model, difficulty, "feature_counts", seed=3)


@pytest.mark.parametrize(
    ("space", "actions", "counts"),
    [
        (COUNT_RECALL["Hard"][0], 17, 26 + 16),
        (gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32), 2, 4 + 16),
        (gymnasium.spaces.Dict({"image": gymnasium.spaces.Box(0, 255, (24, 24, 3), np.uint8)}), (3, 4), 272),
    ],
    ids=["hard", "box", "image-multidiscrete-actions"],
)
def test_the_agent_builds_and_acts_on_any_observation(space, actions, counts) -> None:
    torch.manual_seed(0)
    model = make_agent("count-mixture", space, actions)
    state = act_on_sampled_observations(model, actions, steps=5, batch=2)
    assert state["feature_counts"].shape == (2, counts)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"count_as_action": True}, "choose one"),
        ({"actor_inputs": ("count",)}, "an actor input besides 'count'"),
        ({"counter_inputs": ("encoder", "bias")}, "reads 'encoder'"),
    ],
)
def test_a_wiring_the_mixture_cannot_work_with_is_refused(options: dict, message: str) -> None:
    space, answers, _ = COUNT_RECALL["Easy"]
    with pytest.raises(ValueError, match=message):
        make_agent("count-mixture", space, answers, **options)
    with pytest.raises(ValueError, match="needs a counter"):
        agent_wiring("lstm", count_mixture=True)


def test_the_exact_flat_encoder_has_no_padding_and_older_wirings_have_no_mixture() -> None:
    model = make_agent("count-mixture", COUNT_RECALL["Medium"][0], 27)
    assert isinstance(model.encoder, FlatEncoder) and model.encoder.output_width == 8
    assert model.count_mixture.counts == 8 + 16
    older = agent_wiring("value-count").to_dict()
    del older["count_mixture"]  # a wiring stored before the option existed
    assert Wiring.from_dict(older).count_mixture is False


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*share an object")  # POPGym's envs share one info dict a step
def test_it_learns_count_recall_easy_from_the_command_line(tmp_path: Path, capsys) -> None:
    """`python -m nalu_rl.train --import popgym --env-id popgym-CountRecallEasy-v0 --agent count-mixture`,
    100k steps on one core: the recent return climbs well above random answers' -0.93 (seed 0 on the
    2-core machine of docs/POPGYM.md: -0.47 at 64k steps, -0.07 at 102k)."""
    pytest.importorskip("popgym")
    from nalu_rl.run_scalars import read_series

    argv = ["--import", "popgym", "--env-id", "popgym-CountRecallEasy-v0", "--agent", "count-mixture"]
    argv += ["--actors", "0", "--learner-threads", "1", "--total-steps", "100000", "--eval-episodes", "0"]
    assert train.main([*argv, "--no-progress", "--seed", "0", "--logdir", str(tmp_path)]) == 0
    assert any(line.startswith("MMER: ") for line in capsys.readouterr().err.splitlines())
    returns = read_series(tmp_path, ["charts/episode_return"])["charts/episode_return"]
    # Logged every few seconds: on a busy machine the first point may come late, so only the last is read.
    assert returns[-1].step >= 100_000 and returns[-1].value > -0.5, returns[-1]
