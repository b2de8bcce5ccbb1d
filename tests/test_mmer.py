"""MMER, POPGym's max-mean episodic reward (nalu_rl.mmer): the best epoch mean, a running maximum over
complete epochs that a resumed run keeps; on a POPGym env a run prints it, logs it and records it."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import pytest

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.config import Config
from nalu_rl.mmer import EPOCH_STEPS, MMER_SCALAR, MaxMeanEpisodicReward, is_popgym_env
from nalu_rl.runtime.progress import RunProgress


def test_an_epochs_mean_counts_once_a_batch_reaches_its_end() -> None:
    mmer = MaxMeanEpisodicReward(epoch_steps=100)
    mmer.add(50, [0.5, -0.5])
    mmer.add(100, [1.0])  # the batch ends on the epoch's last step: it belongs to it, and closes it
    assert mmer.complete_epochs == 1 and mmer.value == pytest.approx(1 / 3)
    assert mmer.record()["best_epoch_end_steps"] == 100


def test_mmer_is_the_running_maximum_of_the_complete_epochs_means() -> None:
    mmer = MaxMeanEpisodicReward(epoch_steps=100)
    mmer.add(100, [0.2, 0.4])  # epoch 1: mean 0.3
    mmer.add(200, [0.9, 0.7])  # epoch 2: mean 0.8
    assert mmer.value == pytest.approx(0.8)
    mmer.add(300, [-1.0, -0.5])  # epoch 3: worse; the maximum stays
    assert mmer.value == pytest.approx(0.8) and mmer.complete_epochs == 3
    assert mmer.record()["best_epoch_end_steps"] == 200


def test_a_batch_past_an_epochs_end_belongs_to_the_next_epoch_and_the_unfinished_one_does_not_count() -> None:
    mmer = MaxMeanEpisodicReward(epoch_steps=100)
    mmer.add(60, [0.1])
    mmer.add(120, [1.0, 1.0])  # its last step, 120, lies in epoch 2: epoch 1 is complete with 0.1 alone
    assert mmer.complete_epochs == 1 and mmer.value == pytest.approx(0.1)
    mmer.add(200, [])
    assert mmer.value == pytest.approx(1.0)


def test_an_epoch_without_episodes_has_no_mean_and_a_long_batch_skips_to_its_own_epoch() -> None:
    mmer = MaxMeanEpisodicReward(epoch_steps=100)
    mmer.add(350, [0.3])  # epoch 1 ends empty; steps 301..400 are epoch 4, which holds the episode
    assert mmer.complete_epochs == 0 and mmer.epoch_end == 400
    mmer.add(400, [])
    assert (mmer.complete_epochs, mmer.value, mmer.record()["best_epoch_end_steps"]) == (1, 0.3, 400)


def test_before_a_complete_epoch_mmer_is_the_mean_so_far_and_none_before_an_episode() -> None:
    mmer = MaxMeanEpisodicReward(epoch_steps=100)
    assert mmer.value is None and mmer.summary() == "MMER: none (no episode ended)"
    mmer.add(40, [-0.5, 0.25])
    assert mmer.value == pytest.approx(-0.125) and mmer.complete_epochs == 0
    assert mmer.summary().startswith("MMER: -0.1250 (mean return of the 2 episodes so far")
    assert mmer.record() == {
        "value": -0.125,
        "complete_epochs": 0,
        "epoch_steps": 100,
        "best_epoch_end_steps": None,
    }
    json.dumps(mmer.record())  # run_status.json holds it


def test_a_restored_mmer_continues_exactly_as_the_run_without_a_break() -> None:
    reports = [(80, [0.5]), (160, [0.9, 0.8]), (240, [0.1]), (320, [0.6]), (400, [0.0])]
    whole = MaxMeanEpisodicReward(epoch_steps=100)
    for steps, returns in reports:
        whole.add(steps, returns)
    first = MaxMeanEpisodicReward(epoch_steps=100)
    for steps, returns in reports[:3]:  # stops inside epoch 3, with an episode in it
        first.add(steps, returns)
    resumed = MaxMeanEpisodicReward.restore(first.state())
    for steps, returns in reports[3:]:
        resumed.add(steps, returns)
    assert resumed.state() == whole.state()
    assert resumed.value == pytest.approx(0.85) and resumed.complete_epochs == 4


def test_a_resumed_run_keeps_its_mmer_through_the_checkpoint_counts() -> None:
    config = Config()
    progress = RunProgress(config, None, track_mmer=True)
    progress.mmer = MaxMeanEpisodicReward(epoch_steps=100)  # small epochs for the example
    # record_steps(steps, delays, successes, returns) of the episodes that ended in the batch
    progress.record_steps(100, [0, 0], [False, False], [0.7, 0.5])  # epoch 1: mean 0.6
    progress.record_steps(50, [0], [False], [0.9])  # half of epoch 2
    payload = progress.state()
    resumed = RunProgress(config, None, track_mmer=True)
    resumed.restore(payload)
    assert resumed.steps == 150 and resumed.mmer.value == pytest.approx(0.6)
    resumed.record_steps(50, [0], [False], [0.3])  # epoch 2 closes: mean (0.9 + 0.3) / 2 = 0.6; max holds
    resumed.record_steps(100, [0], [False], [0.8])  # epoch 3: 0.8
    assert resumed.mmer.value == pytest.approx(0.8) and resumed.mmer.complete_epochs == 3


def test_a_checkpoint_from_before_mmer_starts_it_at_the_resumed_step_and_other_envs_keep_none() -> None:
    resumed = RunProgress(Config(), None, track_mmer=True)
    resumed.restore({"steps": 1000, "updates": 3})
    assert resumed.mmer.value is None and resumed.mmer.epoch_end == 1000 + EPOCH_STEPS
    other = RunProgress(Config(), None)
    other.record_steps(10, [0], [False], [1.0])
    assert other.mmer is None and other.state()["mmer"] is None


@pytest.mark.parametrize(
    "stored",
    [
        {"epoch_steps": 100},
        {**MaxMeanEpisodicReward().state(), "epoch_episodes": "many"},
        {**MaxMeanEpisodicReward().state(), "epoch_steps": 0},
        "mmer",
    ],
)
def test_a_malformed_stored_mmer_raises_what_resume_turns_into_a_one_line_error(stored) -> None:
    # TrainingRun._restore turns KeyError, TypeError and ValueError into a CheckpointError.
    with pytest.raises((KeyError, TypeError, ValueError)):
        MaxMeanEpisodicReward.restore(stored)


def _env_from_module(module: str) -> gymnasium.Env:
    env_class = type("TinyEnv", (gymnasium.Env,), {"__module__": module})
    env_class.observation_space = gymnasium.spaces.Discrete(2)
    env_class.action_space = gymnasium.spaces.Discrete(2)
    return gymnasium.wrappers.RecordEpisodeStatistics(env_class())


@pytest.mark.parametrize(
    ("module", "popgym"),
    [("popgym.envs.count_recall", True), ("popgym", True), ("popgym_arcade.envs", False), ("mine", False)],
)
def test_a_popgym_env_is_known_by_the_package_of_its_innermost_class(module: str, popgym: bool) -> None:
    assert is_popgym_env(_env_from_module(module)) is popgym


def test_a_run_on_another_env_prints_logs_and_records_no_mmer(tmp_path: Path, capsys) -> None:
    argv = ["--env-id", "CartPole-v1", "--actors", "0", "--envs-per-actor", "8", "--unroll-length", "10"]
    argv += ["--batch-unrolls", "1", "--no-progress", "--eval-episodes", "0", "--total-steps", "80"]
    run = train.run_training([*argv, "--logdir", str(tmp_path)])
    assert run.progress.mmer is None and "MMER" not in capsys.readouterr().err
    assert "mmer" not in json.loads((tmp_path / "run_status.json").read_text())


@pytest.mark.slow
# POPGym's envs hand out one info dict on every step, which Gymnasium's env checker warns of.
@pytest.mark.filterwarnings("ignore:.*share an object")
def test_lstm_on_popgym_count_recall_prints_logs_records_and_resumes_its_mmer(tmp_path: Path, capsys) -> None:
    """`python -m nalu_rl.train --import popgym --env-id popgym-CountRecallEasy-v0 --agent lstm`,
    briefly (episodes of 51 steps; 16 envs x 3,200 steps end about 48 of them)."""
    pytest.importorskip("popgym")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    argv = ["--import", "popgym", "--env-id", "popgym-CountRecallEasy-v0", "--agent", "lstm"]
    argv += ["--actors", "0", "--envs-per-actor", "16", "--unroll-length", "20", "--no-progress"]
    argv += ["--eval-episodes", "0", "--logdir", str(tmp_path)]
    assert train.main([*argv, "--total-steps", "3000"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("MMER: ")]
    assert len(lines) == 1, lines
    record = json.loads((tmp_path / "run_status.json").read_text())["mmer"]
    assert -1.0 <= record["value"] <= 1.0 and record["epoch_steps"] == EPOCH_STEPS
    assert lines[0].startswith(f"MMER: {record['value']:.4f}")
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert events.Scalars(MMER_SCALAR)[-1].value == pytest.approx(record["value"], abs=1e-6)
    episodes = load_checkpoint(tmp_path)["mmer"]["epoch_episodes"]
    assert episodes > 20

    assert train.main(["--resume", str(tmp_path), "--import", "popgym", "--total-steps", "4000"]) == 0
    assert load_checkpoint(tmp_path)["mmer"]["epoch_episodes"] > episodes  # the same epoch, continued
    resumed = json.loads((tmp_path / "run_status.json").read_text())["mmer"]
    assert -1.0 <= resumed["value"] <= 1.0
