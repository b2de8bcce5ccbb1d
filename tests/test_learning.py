"""The learner's algorithms and defaults: PPO beside A3C, advantage and return normalisation, the
defaults on an env that is not a timing task, and how such a run reads (progress, final line, config)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import EASY, cli_exit_code, random_policy_success_rate
from memory_task import ENV_ID as MEMORY_ENV_ID
from memory_task import OneStepMemoryEnv

from nalu_rl import train
from nalu_rl.config import TIMING_TASK_FIELDS, Config, agent_training_defaults, parse_config
from nalu_rl.runtime.monitor import EpisodeWindow
from nalu_rl.runtime.normalization import RewardNormalizer

NAC_EASY = [value if value != "lstm" else "nac" for value in EASY]
# A few small batches of CartPole in one process: enough to exercise an update, not to learn.
CARTPOLE_TINY = [
    "--env-id", "CartPole-v1", "--actors", "0", "--envs-per-actor", "8", "--unroll-length", "10",
    "--batch-unrolls", "1", "--no-progress", "--eval-episodes", "0",
]  # fmt: skip


def test_an_unknown_algo_is_one_line_and_exit_2(capsys) -> None:
    assert cli_exit_code(train.main, ["--algo", "sgd"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--algo" in error


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env-id", "CartPole-v1", "--runtime", "hogwild", "--no-return-norm"], "--algo ppo runs on"),
        (["--env-id", "CartPole-v1", "--runtime", "hogwild", "--algo", "a3c"], "--no-return-norm"),
        (["--env-id", "CartPole-v1", "--ppo-minibatches", "0"], "--ppo-minibatches"),
        (["--env-id", "CartPole-v1", "--gae-lambda", "1.5"], "--gae-lambda"),
    ],
)
def test_options_the_runtime_cannot_take_are_one_line_and_exit_2(argv, message, tmp_path, capsys) -> None:
    assert cli_exit_code(train.main, [*argv, "--logdir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error, error


def test_an_env_that_is_not_a_timing_task_trains_lstm_with_ppo_and_the_agents_keep_a3c_on_timing_tasks() -> (
    None
):
    generic, _ = parse_config(["--env-id", "CartPole-v1"])
    assert (generic.agent, generic.algo, generic.value_targets) == ("lstm", "ppo", "gae")
    assert generic.advantage_norm and generic.return_norm
    # The measured agents train the timing tasks as their results were trained.
    for agent in ("signed-count", "nac", "lstm"):
        config, _ = parse_config(["--agent", agent])
        assert (config.algo, config.value_targets, config.max_grad_norm) == ("a3c", "vtrace", 40.0)
        assert not config.advantage_norm and not config.return_norm
        assert agent_training_defaults(agent)["algo"] == "a3c"
    # On another env the same agent trains with train's defaults; an option given always wins.
    assert parse_config(["--agent", "nac", "--env-id", "CartPole-v1"])[0].algo == "ppo"
    assert parse_config(["--agent", "nac", "--algo", "ppo"])[0].algo == "ppo"


def test_config_json_of_an_env_that_is_not_a_timing_task_has_no_timing_task_fields() -> None:
    generic = Config(agent="lstm", env_id="CartPole-v1").to_dict()
    assert not set(TIMING_TASK_FIELDS) & set(generic), set(TIMING_TASK_FIELDS) & set(generic)
    assert generic["env"] == {}
    assert set(TIMING_TASK_FIELDS) <= set(Config().to_dict())
    # What is left still rebuilds the config.
    assert Config.from_dict(generic).env_id == "CartPole-v1"


def test_the_headline_is_the_return_on_an_env_without_success_and_the_success_on_a_timing_task() -> None:
    generic = EpisodeWindow(2, ceilings=None, target_fraction=0.9)
    generic.add(np.zeros(2), np.array([False, False]), np.array([10.0, 20.0]))
    assert generic.headline() == "return 15.0" and not generic.reports_success
    generic.add(np.zeros(1), np.array([True]), np.array([30.0]))  # the env has now reported a success
    assert generic.headline() == "return 25.0 success 0.50"
    timing = EpisodeWindow(4, ceilings=[1.0], target_fraction=0.9)
    timing.add(np.array([5, 6]), np.array([True, False]), np.array([1.0, -1.0]))
    assert timing.headline() == "success ~0.50"


def test_reward_normalizer_keeps_the_running_variance_of_everything_it_saw() -> None:
    values = torch.randn(1000, dtype=torch.float64) * 7.0 + 3.0
    normalizer = RewardNormalizer()
    for chunk in values.split(137):
        normalizer.update(chunk)
    assert normalizer.mean == pytest.approx(float(values.mean()), rel=1e-3)
    assert normalizer.var == pytest.approx(float(values.var(unbiased=False)), rel=1e-3)
    torch.testing.assert_close(
        normalizer.normalize(torch.tensor([7.0, 1e6])),
        torch.tensor([7.0 / normalizer.scale, normalizer.clip]),
    )


def test_a_generic_run_reads_as_one_and_resume_continues_the_return_statistics(
    tmp_path: Path, capsys
) -> None:
    run = train.run_training([*CARTPOLE_TINY, "--total-steps", "400", "--logdir", str(tmp_path)])
    first = run.reward_normalizer.state_dict()
    assert first["count"] > 300  # the discounted returns of the unmasked steps
    err = capsys.readouterr().err
    final = [line for line in err.splitlines() if line.startswith("step budget")][-1]
    assert "recent return" in final and "success" not in final
    saved = json.loads((tmp_path / "config.json").read_text())
    assert "delay_range" not in saved and saved["agent"] == "lstm" and saved["algo"] == "ppo"
    resumed = train.run_training(["--resume", str(tmp_path), "--total-steps", "800"])
    assert resumed.reward_normalizer.count > first["count"] + 300
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert "charts/episode_return" in tags and "charts/success_rate" not in tags


def test_ppo_takes_epochs_times_minibatches_steps_per_batch_and_starts_on_the_acting_policy(tmp_path) -> None:
    argv = [*CARTPOLE_TINY, "--ppo-epochs", "3", "--ppo-minibatches", "2", "--total-steps", "80"]
    run = train.run_training([*argv, "--logdir", str(tmp_path)])
    assert run.updates == 1 and run.last_metrics["loss/minibatch_updates"] == 6
    adam_steps = {int(state["step"]) for state in run.optimizer.state.values()}
    assert adam_steps == {6}


def test_a_time_budget_stops_the_run(tmp_path: Path, capsys) -> None:
    run = train.run_training([*CARTPOLE_TINY, "--time-budget-s", "0.001", "--logdir", str(tmp_path)])
    assert run.stop_reason == "time budget of 0.001 s spent" and run.steps < Config.total_steps


@pytest.mark.parametrize("algo", ["a3c", "ppo"])
def test_both_algorithms_train_timetrack_nac_well_above_a_random_policy(algo: str, tmp_path: Path) -> None:
    steps = {"a3c": "20000", "ppo": "12000"}[algo]  # 8 s and 19 s measured on 2 busy cores
    run = train.run_training(
        [*NAC_EASY, "--actors", "0", "--algo", algo, "--total-steps", steps, "--logdir", str(tmp_path)]
    )
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(3 * chance, chance + 0.15), (run.window.success_rate(), chance)


@pytest.mark.slow
def test_the_defaults_learn_the_one_step_memory_task(tmp_path: Path) -> None:
    # train's learner (PPO, GAE, both normalisations) with a smaller runtime, a faster rate and the
    # 4 epochs these runs were measured with (10 at this rate overshoot: 36-38). Once learned, the
    # recent return of such runs wanders between 42 and 47.5 of 49; with 32 envs it stayed at
    # 45.2-47.5 from 60k steps on (docs/data/learning/memory, TRAINING "Why these defaults").
    best = OneStepMemoryEnv().best_return()
    run = train.run_training(
        [
            "--import",
            "memory_task",
            "--env-id",
            MEMORY_ENV_ID,
            "--actors",
            "0",
            "--envs-per-actor",
            "32",
            "--batch-unrolls",
            "1",
            "--learning-rate",
            "2e-3",
            "--ppo-epochs",
            "4",
            "--precision",
            "fp32",
            "--total-steps",
            "80000",
            "--success-window",
            "100",
            "--no-progress",
            "--logdir",
            str(tmp_path),
        ]  # fmt: skip
    )
    assert run.config.agent == "lstm" and run.config.algo == "ppo"
    # 0.8 of the best, at the floor of that wander: guessing earns about a quarter of it. The same
    # seeded run ends at different returns on different CPUs (their float kernels differ): 43.25 on
    # an Intel Xeon with AMX (2026-12-06), where 0.9 of the best (44.1) failed.
    assert run.window.mean_return() >= 0.8 * best, run.window.mean_return()


def test_the_measured_agents_timing_task_loss_is_the_a3c_v_trace_loss_as_before() -> None:
    from nalu_rl.agents import actor_critic_loss, agent_wiring, vtrace
    from nalu_rl.runtime.actor import Actor, build_policy
    from nalu_rl.runtime.rollout import RolloutBuffers
    from nalu_rl.runtime.update import compute_loss

    config, _ = parse_config(
        ["--agent", "nac", "--obs", "symbolic", "--envs-per-actor", "4", "--precision", "fp32"]
    )
    torch.manual_seed(0)
    model = build_policy(config, agent_wiring("nac"))
    buffers = RolloutBuffers(
        model.observation_space, model.initial_state(4), config.unroll_length, 4, 1, shared=False
    )
    Actor(config, model, 4, seed=0).unroll(buffers.slot(0))
    batch = buffers.batch([0])
    total, _ = compute_loss(model, batch, config)
    logits, values, _ = model(batch.obs, batch.episode_start, batch.initial_state)
    length = batch.actions.shape[0]
    log_probs = torch.log_softmax(logits[:length], -1).gather(-1, batch.actions[..., None]).squeeze(-1)
    targets = vtrace(
        batch.behaviour_log_probs,
        log_probs.detach(),
        batch.rewards,
        config.gamma * (~batch.terminated).float(),
        values[:length].detach(),
        values[length].detach(),
    )
    mask = (~batch.ignored).float()
    expected = actor_critic_loss(
        logits[:length], batch.actions, values[:length], targets.vs, targets.pg_advantages, mask
    )
    torch.testing.assert_close(total, expected.total + 0.0 * model.regularizer())
