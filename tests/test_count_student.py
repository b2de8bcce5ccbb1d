"""The teacher head and its handover (`nalu_rl.agents.count_student`), alone and in a model."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gymnasium
import numpy as np
import pytest
import torch
from test_agents import parts_with_gradients
from torch.nn import functional

from nalu_rl.agents import make_agent
from nalu_rl.agents.count_student import CountStudent
from nalu_rl.agents.separate_critic import SeparateCritic
from nalu_rl.config import Config
from nalu_rl.runtime.monitor import EpisodeWindow
from nalu_rl.runtime.run import BEST_CHECKPOINT, TrainingRun
from nalu_rl.runtime.run_checkpoints import RunCheckpoints
from nalu_rl.runtime.stop_rule import RunCounters

_BOX = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)


def _logits() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(4, 3, 5, generator=generator), torch.randn(4, 3, 5, generator=generator)


def test_the_handover_mixes_the_two_policies_by_its_weight() -> None:
    student, teacher = _logits()
    mixing = CountStudent(torch.nn.Identity(), 5)
    torch.testing.assert_close(mixing(student, teacher), teacher)
    mixing.handover.fill_(1.0)
    torch.testing.assert_close(mixing(student, teacher), student)
    mixing.handover.fill_(0.25)
    expected = 0.75 * torch.softmax(teacher, -1) + 0.25 * torch.softmax(student, -1)
    torch.testing.assert_close(torch.softmax(mixing(student, teacher), -1), expected)


def test_the_handover_mixes_each_component_of_multidiscrete_actions_apart() -> None:
    student, teacher = _logits()
    mixing = CountStudent(torch.nn.Identity(), [2, 3])
    mixing.handover.fill_(0.5)
    mixed = mixing(student, teacher)
    for block in mixed.split([2, 3], -1):
        torch.testing.assert_close(block.exp().sum(-1), torch.ones(4, 3))


def test_a_held_teacher_gets_no_gradient_from_the_mixture_while_it_hands_over() -> None:
    for hold, handover, teacher_learns in ((True, 0.5, False), (False, 0.5, True), (True, 0.0, True)):
        student, teacher = (logits.requires_grad_(True) for logits in _logits())
        mixing = CountStudent(torch.nn.Identity(), 5, hold_teacher=hold)
        mixing.handover.fill_(handover)
        mixing(student, teacher)[..., 0].sum().backward()
        assert (teacher.grad is not None and bool(teacher.grad.abs().sum() > 0)) == teacher_learns
        assert (student.grad is not None) == (handover > 0)
    with pytest.raises(ValueError, match="teacher_held"):
        make_agent("learned-count", _BOX, 2, teacher_inputs=("memory",), teacher_held=True)


def test_the_imitation_loss_is_the_kl_to_the_teacher_and_moves_the_student_only() -> None:
    student, teacher = _logits()
    student.requires_grad_(True)
    teacher.requires_grad_(True)
    mixing = CountStudent(torch.nn.Identity(), 5)
    mask = torch.ones(4, 3)
    mask[0] = 0.0
    loss = mixing.imitation_loss(student, teacher, mask)
    teacher_probs = torch.softmax(teacher[1:], -1)
    expected = (
        (teacher_probs * (teacher_probs.log() - functional.log_softmax(student[1:], -1))).sum(-1).mean()
    )
    torch.testing.assert_close(loss, expected)
    loss.backward()
    assert teacher.grad is None
    assert student.grad[1:].abs().sum() > 0 and student.grad[0].abs().sum() == 0
    assert float(mixing.imitation_loss(teacher.detach(), teacher.detach(), mask)) == pytest.approx(
        0.0, abs=1e-6
    )


def test_a_model_with_a_teacher_acts_with_it_and_teaches_the_actor_head_through_the_count() -> None:
    torch.manual_seed(0)
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    model = make_agent("learned-count", space, 2, teacher_inputs=("memory",))
    obs = {"observation": torch.randn(6, 2, 4)}
    starts = torch.zeros(6, 2, dtype=torch.bool)
    output = model.student.teacher[-1]
    with torch.no_grad():
        saved = output.weight.clone()
        output.weight.zero_()
        output.bias.copy_(torch.tensor([2.0, -1.0]))
        logits, _, _ = model(obs, starts, model.initial_state(2))
        # The teacher acts (handover 0): the policy's logits are its own.
        torch.testing.assert_close(logits, torch.tensor([2.0, -1.0]).expand(6, 2, 2))
        model.student.handover.fill_(1.0)
        student_logits, _, _ = model(obs, starts, model.initial_state(2))
        assert (student_logits - logits).abs().max() > 0.5
        model.student.handover.fill_(0.0)
        output.weight.copy_(saved)
    assert float(model.auxiliary_loss(torch.ones(6, 2))) == 0.0  # no gradient pass, no loss
    model(obs, starts, model.initial_state(2))
    loss = model.auxiliary_loss(torch.ones(5, 2))
    assert float(loss.detach()) > 0.0
    loss.backward()
    moved = parts_with_gradients(model)
    assert "actor" in moved and "cores" in moved  # the actor head, and through the count the counter
    assert model.student.teacher[-1].weight.grad is None
    assert float(model.auxiliary_loss(torch.ones(5, 2))) == 0.0  # taken once per gradient pass


def test_a_teacher_cannot_teach_a_count_read_as_an_action() -> None:
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    with pytest.raises(ValueError, match="teacher_inputs"):
        make_agent("learned-count", space, 2, teacher_inputs=("memory",), count_as_action=True)


def test_the_handover_follows_the_ramp_it_is_given_only_where_the_wiring_asks() -> None:
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    mask = torch.ones(3, 2)
    for handover_on, expected in ((True, 0.4), (False, 0.0)):
        model = make_agent(
            "learned-count", space, 2, teacher_inputs=("memory",), teacher_handover=handover_on
        )
        model.auxiliary_loss(mask, handover=0.4)
        assert float(model.student.handover) == pytest.approx(expected)
    with pytest.raises(ValueError, match="teacher_handover"):
        make_agent("learned-count", space, 2, teacher_handover=True)


def test_a_handing_over_run_keeps_no_best_checkpoint_until_a_window_after_the_student_acts_alone(
    tmp_path: Path,
) -> None:
    model = make_agent("learned-count", _BOX, 2, teacher_inputs=("memory",), teacher_handover=True)
    config = Config(success_window=10)
    window = EpisodeWindow(10, [1.0], 0.9)
    window.add([5] * 10, [True] * 10, [1.0] * 10)
    # TrainingRun.save_if_best reads these parts of a run only.
    run = SimpleNamespace(
        model=model,
        config=config,
        counters=RunCounters(),
        window=window,
        steps=100,
        checkpoints=RunCheckpoints(tmp_path, 60.0),
        checkpoint_payload=lambda: {"steps": 100},
        episodes_acting_as_trained_from=0,
    )
    model.auxiliary_loss(torch.ones(1, 1), handover=0.5)
    assert not TrainingRun.save_if_best(run)  # the teacher still acts in half the policy
    model.auxiliary_loss(torch.ones(1, 1), handover=1.0)
    run.counters.episodes = 40
    assert not TrainingRun.save_if_best(run)  # the window still holds episodes of the mixture
    run.counters.episodes = 50
    assert TrainingRun.save_if_best(run) and (tmp_path / BEST_CHECKPOINT).exists()
    plain = make_agent("learned-count", _BOX, 2, teacher_inputs=("memory",))
    assert plain.acts_as_trained()  # a teacher that never hands over: every checkpoint is a candidate


def _episode_handover_model(handover: float) -> torch.nn.Module:
    torch.manual_seed(0)
    model = make_agent(
        "learned-count", _BOX, 2, teacher_inputs=("memory",), teacher_handover=True, teacher_by_episode=True
    )
    model.student.handover.fill_(handover)
    return model


def test_a_handover_by_episodes_plays_each_episode_by_one_head_and_replays_the_same_draws() -> None:
    model = _episode_handover_model(0.5)
    steps, envs = 60, 6
    generator = torch.Generator().manual_seed(1)
    obs = {"observation": torch.randn(steps, envs, 4, generator=generator)}
    starts = torch.rand(steps, envs, generator=generator) < 0.15
    starts[0] = True
    assert model.state_names[-2:] == ("handover_draw", "handover_episode_steps")
    with torch.no_grad():
        whole, _, whole_state = model(obs, starts, model.initial_state(envs))
        state, stepped = model.initial_state(envs), []
        for t in range(steps):  # as an actor steps, one observation at a time
            logits, _, state = model({"observation": obs["observation"][t : t + 1]}, starts[t : t + 1], state)
            stepped.append(logits)
        student_heads, _ = model.student.episode_heads(starts, model.initial_state(envs)[-2:])
    torch.testing.assert_close(torch.cat(stepped), whole)  # the learner's replay draws as the actor did
    for ours, theirs in zip(state, whole_state, strict=True):
        torch.testing.assert_close(ours, theirs)
    episode = starts.long().cumsum(0)
    for env in range(envs):
        for number in episode[:, env].unique():
            heads = student_heads[episode[:, env] == number, env]
            assert bool((heads == heads[0]).all())  # one head for the whole episode
    assert 0 < float(student_heads.float().mean()) < 1  # both heads play at w = 1/2


def test_the_share_of_episodes_the_student_plays_follows_the_handover() -> None:
    from nalu_rl.agents.count_student import next_draws

    envs, generator = 256, torch.Generator().manual_seed(2)
    draw, steps = torch.zeros(envs, 1), torch.zeros(envs, 1)
    draws = []
    for _ in range(400):
        start = torch.rand(envs, generator=generator) < 0.1
        draw, steps, uniform = next_draws(draw, steps, start)
        draws.append(uniform[start])
    draws = torch.cat(draws)
    assert float(draws.min()) >= 0.0 and float(draws.max()) < 1.0
    for weight in (0.1, 0.5, 0.9):
        assert float((draws < weight).double().mean()) == pytest.approx(weight, abs=0.03)
    model = _episode_handover_model(0.0)
    for handover, student_share in ((0.0, 0.0), (1.0, 1.0)):
        model.student.handover.fill_(handover)
        heads, _ = model.student.episode_heads(
            torch.ones(3, 4, dtype=torch.bool), model.initial_state(4)[-2:]
        )
        assert float(heads.float().mean()) == student_share


def test_a_handover_by_episodes_needs_a_handover_and_holds_no_teacher() -> None:
    with pytest.raises(ValueError, match="teacher_by_episode"):
        make_agent("learned-count", _BOX, 2, teacher_inputs=("memory",), teacher_by_episode=True)
    with pytest.raises(ValueError, match="teacher_held"):
        make_agent(
            "learned-count",
            _BOX,
            2,
            teacher_inputs=("memory",),
            teacher_handover=True,
            teacher_held=True,
            teacher_by_episode=True,
        )


def _one_episode_each(envs: int, seed: int, steps: int = 5) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Random 4-wide observations [steps, envs, 4] from `seed`, and episode starts at the first step only."""
    obs = {"observation": torch.randn(steps, envs, 4, generator=torch.Generator().manual_seed(seed))}
    starts = torch.zeros(steps, envs, dtype=torch.bool)
    starts[0] = True
    return obs, starts


def test_a_critic_that_reads_the_head_values_the_same_episode_apart_for_each_head() -> None:
    model = _episode_handover_model(0.0)
    envs = 3
    obs, starts = _one_episode_each(envs, seed=4)
    for separate in (False, True):  # the model's critic head, and a critic with a memory core of its own
        values = {}
        for reads_head in (False, True):
            torch.manual_seed(0)
            critic_model = make_agent(
                "learned-count",
                _BOX,
                2,
                teacher_inputs=("memory",),
                teacher_handover=True,
                teacher_by_episode=True,
                critic_inputs=("memory",),
                critic_separate=separate,
                critic_reads_head=reads_head,
            )
            assert isinstance(critic_model.critic, SeparateCritic) is separate
            with torch.no_grad():
                for handover in (0.0, 1.0):  # every episode the teacher's, then every one the student's
                    critic_model.student.handover.fill_(handover)
                    _, value, _ = critic_model(obs, starts, critic_model.initial_state(envs))
                    values[reads_head, handover] = value
        torch.testing.assert_close(values[False, 0.0], values[False, 1.0])
        assert (values[True, 0.0] - values[True, 1.0]).abs().min() > 0
    with pytest.raises(ValueError, match="critic_reads_head"):
        make_agent("learned-count", _BOX, 2, critic_reads_head=True)
    assert model.wiring.critic_reads_head is False


def test_each_heads_entropy_is_recorded_whichever_head_plays() -> None:
    model = _episode_handover_model(0.0)
    steps, envs = 5, 3
    obs, starts = _one_episode_each(envs, seed=5, steps=steps)
    output = model.student.teacher[-1]
    with torch.no_grad():  # a teacher sure of its first action; the student's head starts near uniform
        output.weight.zero_()
        output.bias.copy_(torch.tensor([30.0, -30.0]))
    model(obs, starts, model.initial_state(envs))
    model.auxiliary_loss(torch.ones(steps, envs))
    entropies = model.student.head_entropies()
    assert entropies["loss/entropy_teacher"] == pytest.approx(0.0, abs=1e-6)
    assert entropies["loss/entropy_student"] == pytest.approx(np.log(2), abs=0.02)
