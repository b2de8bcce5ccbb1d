"""The earned handover (`nalu_rl.runtime.handover`, --handover-earned): the student takes over only
as fast as it keeps up with the teacher."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from nalu_rl.config import Config
from nalu_rl.config.validation import validate
from nalu_rl.errors import InputError
from nalu_rl.runtime.handover import HEAD_WINDOW, MIN_EPISODES, TRIAL_SHARE, EarnedHandover
from nalu_rl.runtime.update import ramps

_CONFIG = Config(
    regularizer_start_steps=100, regularizer_end_steps=300, handover_steps=1000, handover_earned=0.9
)


def _outcomes(successes: int, episodes: int = MIN_EPISODES) -> np.ndarray:
    return np.arange(episodes) < successes


def test_the_student_plays_a_trial_share_once_the_regularizer_is_full_and_takes_over_as_it_keeps_up() -> None:
    handover = EarnedHandover(_CONFIG)
    assert handover.value(-1) == 0.0 and handover.value(299) == 0.0  # the gate closed; the ramp not full
    assert handover.value(300) == TRIAL_SHARE
    # The student at 0.5 against a teacher at 1.0: below 0.9 of it, the ramp holds.
    handover.record(200, _outcomes(50), _outcomes(100))
    assert handover.success("student") == 0.5 and handover.success("teacher") == 1.0
    assert handover.value(500) == TRIAL_SHARE and handover.clock == 0
    # Its recent episodes reach 0.95 (the window keeps the last HEAD_WINDOW): the ramp advances by them.
    handover.record(600, _outcomes(HEAD_WINDOW * 19 // 20, HEAD_WINDOW), _outcomes(100))
    assert handover.success("student") == pytest.approx(0.95)
    assert handover.clock == 600 and handover.value(1000) == pytest.approx(0.6)
    handover.record(600, _outcomes(HEAD_WINDOW, HEAD_WINDOW), np.zeros(0, bool))
    assert handover.value(2000) == 1.0


def test_the_earned_handover_waits_for_enough_episodes_and_starts_again_where_the_gate_closes() -> None:
    handover = EarnedHandover(_CONFIG)
    handover.value(300)
    handover.record(500, _outcomes(MIN_EPISODES - 1, MIN_EPISODES - 1), _outcomes(0))
    assert handover.success("student") is None and handover.clock == 0  # too few of its episodes
    handover.record(500, _outcomes(1, 1), _outcomes(0))
    assert handover.clock == 500
    assert handover.value(-1) == 0.0  # the regulariser's gate closed
    assert handover.clock == 0 and handover.success("student") is None
    restored = EarnedHandover(_CONFIG)
    handover.value(300)
    handover.record(100, _outcomes(MIN_EPISODES), _outcomes(MIN_EPISODES))
    restored.restore(handover.state())
    assert restored.clock == handover.clock == 100 and restored.value(300) == handover.value(300)


def test_a_dip_of_the_teachers_success_does_not_lower_the_students_bar() -> None:
    handover = EarnedHandover(_CONFIG)
    handover.value(300)
    handover.record(100, _outcomes(50), _outcomes(MIN_EPISODES))  # teacher 1.0, student 0.5: held
    # The teacher dips to 0.4 (its last HEAD_WINDOW episodes); the student's 0.5 is still below 0.9 of
    # the teacher's best, 1.0, so the ramp holds where a bar from the dip (0.36) would let it pass.
    handover.record(100, _outcomes(50), _outcomes(HEAD_WINDOW * 2 // 5, HEAD_WINDOW))
    assert handover.success("teacher") == pytest.approx(0.4) and handover.teacher_best == 1.0
    assert handover.clock == 0
    restored = EarnedHandover(_CONFIG)
    restored.restore(handover.state())
    assert restored.teacher_best == 1.0
    assert handover.value(-1) == 0.0 and handover.teacher_best is None  # the gate closed: forgotten


def test_a_teacher_that_falls_before_the_handover_starts_keeps_the_bar_it_set() -> None:
    handover = EarnedHandover(_CONFIG)
    handover.value(200)  # the regulariser's ramp under way: no handover yet
    handover.record(100, np.zeros(0, bool), _outcomes(MIN_EPISODES))  # the teacher at 1.0
    handover.record(100, np.zeros(0, bool), _outcomes(0, HEAD_WINDOW))  # then at 0
    assert handover.value(300) == TRIAL_SHARE and handover.teacher_best == 1.0
    handover.record(100, _outcomes(0), _outcomes(0))  # a student at 0 does not keep up with it
    assert handover.clock == 0


def test_a_retreating_handover_goes_back_while_the_student_falls_behind_and_never_below_the_trial() -> None:
    for retreats in (False, True):
        handover = EarnedHandover(replace(_CONFIG, handover_retreat=retreats))
        handover.value(300)
        handover.record(1000, _outcomes(MIN_EPISODES), _outcomes(MIN_EPISODES))  # kept up: handed over
        assert handover.value(300) == 1.0
        # The student falls to 0 over its last HEAD_WINDOW episodes, against the teacher's best of 1.0.
        handover.record(400, _outcomes(0, HEAD_WINDOW), np.zeros(0, bool))
        assert handover.value(300) == (pytest.approx(0.6) if retreats else 1.0)
        handover.record(5000, _outcomes(0, HEAD_WINDOW), np.zeros(0, bool))
        assert handover.value(300) == (TRIAL_SHARE if retreats else 1.0)
        assert handover.clock == (0 if retreats else 1000)


def test_an_earned_handover_is_passed_to_the_update_instead_of_the_steps_ramp() -> None:
    assert ramps(_CONFIG, 500) == (1.0, 0.2)
    assert ramps(_CONFIG, 500, handover=0.1) == (1.0, 0.1)
    for wrong, message in (
        (Config(handover_steps=100, handover_earned=1.5), "handover-earned"),
        (Config(handover_retreat=True), "handover-retreat"),
        (Config(handover_earned=0.9), "--handover-steps"),
        (
            Config(handover_steps=100, handover_earned=0.9, runtime="hogwild", regularizer_gate_success=0.0),
            "learner",
        ),
    ):
        with pytest.raises(InputError, match=message):
            validate(wrong)


def test_a_run_hands_over_by_earning_it_and_resumes_its_clock(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "nalu_rl.train", "--agent", "taught-count",
        "--env-id", "nalu_rl/ReadySetGo-v0", "--total-steps", "60000",
        "--regularizer-gate-success", "0", "--regularizer-gate-fall", "0", "--regularizer-start-steps", "0",
        "--regularizer-end-steps", "5000", "--handover-steps", "20000", "--handover-earned", "0.01",
        "--actors", "1", "--eval-episodes", "0", "--no-progress", "--logdir", str(tmp_path / "run"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    payload = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)
    assert payload["earned_handover"]["started"]
    # A student that keeps up with 1/100 of the teacher's success (or a teacher that never succeeds,
    # this early) takes over: the clock ran through the batches.
    assert payload["earned_handover"]["clock"] > 0
    wrong = subprocess.run(
        [
            sys.executable,
            "-m",
            "nalu_rl.train",
            "--agent",
            "lstm",
            "--handover-steps",
            "10",
            "--handover-earned",
            "0.5",
            "--total-steps",
            "1000",
            "--logdir",
            str(tmp_path / "lstm"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode == 2 and "teacher hands over by episodes" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def _taught_count_and_a_loss() -> tuple[torch.nn.Module, torch.Tensor]:
    """A `taught-count` model on ReadySetGo (seed 0) and a loss of its forward pass over a short batch
    that reaches every part (its logits, its value and the student's imitation)."""
    from nalu_rl.agents import make_agent
    from nalu_rl.envs import ReadySetGoEnv

    torch.manual_seed(0)
    model = make_agent("taught-count", ReadySetGoEnv().observation_space, 2)
    obs = {"cues": torch.rand(6, 3, 2)}
    starts = torch.zeros(6, 3, dtype=torch.bool)
    starts[0] = True
    logits, value, _ = model(obs, starts, model.initial_state(3))
    return model, logits.square().mean() + value.square().mean() + model.auxiliary_loss(torch.ones(6, 3))


def test_each_update_logs_the_gradient_norm_of_each_part_of_the_model() -> None:
    from nalu_rl.runtime.update import guarded_update

    model, loss = _taught_count_and_a_loss()
    metrics = guarded_update(model, loss, {"loss/total": float(loss.detach())}, 0.001, lambda: None)
    parts = {name: norm for name, norm in metrics.items() if name.startswith("grad_norm/")}
    assert {"grad_norm/encoder", "grad_norm/cores.memory", "grad_norm/cores.count", "grad_norm/actor"} <= set(
        parts
    )
    assert "grad_norm/student.teacher" in parts and "grad_norm/critic" in parts
    # The parts' norms make up the whole (measured before the clip at 0.001).
    assert sum(norm**2 for norm in parts.values()) ** 0.5 == pytest.approx(
        metrics["loss/grad_norm"], rel=1e-4
    )


def test_clipping_by_part_bounds_each_part_on_its_own() -> None:
    from nalu_rl.runtime.update import guarded_update, model_parts

    model, loss = _taught_count_and_a_loss()
    metrics = guarded_update(model, loss, {"loss/total": float(loss.detach())}, 1e-3, lambda: None, True)
    named = [(name, weight) for name, weight in model.named_parameters() if weight.grad is not None]
    for part, indices in model_parts([name for name, _ in named]).items():
        clipped = torch.nn.utils.get_total_norm([named[index][1].grad for index in indices])
        before = metrics[f"grad_norm/{part}"]
        # Each part is clipped to the bound alone: a part under it keeps its gradient.
        assert float(clipped) == pytest.approx(min(before, 1e-3), rel=1e-3)
    assert metrics["loss/grad_norm"] > 2e-3  # so that a global clip would have scaled every part
