"""`python -m nalu_rl.train`: options, one-line errors, and learning in one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import EASY, ONE_PROCESS_RUNTIMES, random_policy_success_rate, run_cli_capture

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.cli import run_cli
from nalu_rl.config import Config, agent_training_defaults, build_parser, parse_config, validate
from nalu_rl.errors import InputError
from nalu_rl.runtime.monitor import Dashboard, EpisodeWindow
from nalu_rl.runtime.progress import RunProgress
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.run_folder import open_run_folder
from nalu_rl.runtime.training import learner_threads
from nalu_rl.runtime.update import ramps


def test_wirings_know_whether_their_policy_reads_an_lstm() -> None:
    from nalu_rl.agents import agent_wiring

    names = ("lstm", "nac", "nac-ff", "nac-lstm-feeds")
    reads = {name: agent_wiring(name).policy_reads_memory for name in names}
    assert reads == {"lstm": True, "nac": False, "nac-ff": False, "nac-lstm-feeds": True}


def test_a_batch_larger_than_the_buffers_is_refused_only_when_actors_run_ahead() -> None:
    # Two unrolls from one buffer would wait forever; synchronous actors take one unroll per actor.
    validate(Config(actors=1, buffers_per_actor=1, batch_unrolls=2))
    with pytest.raises(InputError, match="buffers"):
        validate(Config(actors=1, buffers_per_actor=1, batch_unrolls=2, synchronous=False))


def test_learner_takes_every_core_only_while_synchronous_actors_wait(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert learner_threads(Config(actors=2)) == 8
    assert learner_threads(Config(actors=2, synchronous=False)) == 5
    assert learner_threads(Config(actors=0)) == 7
    assert learner_threads(Config(actors=2, learner_threads=3)) == 3


def test_every_config_field_is_an_option_with_help() -> None:
    help_text = build_parser().format_help()
    for item in Config.__dataclass_fields__.values():
        assert item.metadata.get("flag", "--" + item.name.replace("_", "-")) in help_text
    for action in build_parser()._actions:
        if action.dest != "help":
            assert action.help, action.dest


def test_help_lists_each_option_in_its_group_and_each_group_has_its_check() -> None:
    from nalu_rl.config.options import OPTION_GROUPS, option_names
    from nalu_rl.config.validation import GROUP_CHECKS

    titles = {group.title: group for group in build_parser()._action_groups}
    for name, title in OPTION_GROUPS.items():
        listed = {action.dest for action in titles[title]._group_actions}
        assert set(option_names(name)) <= listed, name
    assert option_names("runtime")[:2] == ("runtime", "actors") and "gamma" in option_names("learner")
    assert sum(len(option_names(name)) for name in OPTION_GROUPS) == len(Config.__dataclass_fields__)
    assert list(GROUP_CHECKS)[-1] == "environment" and set(GROUP_CHECKS) == set(OPTION_GROUPS)


def test_config_round_trips_through_its_dict_and_names_the_env() -> None:
    config = Config(agent="lstm", obs="symbolic", delay_range=(3, 7), size=4)
    values = json.loads(json.dumps(config.to_dict()))
    assert Config.from_dict(values) == config
    assert values["env"] == {
        "obs_mode": "symbolic", "size": 4, "delay_range": [3, 7], "stimulus": "onset", "reward_mode": "graded"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agent", "no-such-agent"], "unknown agent"),
        (["--total-steps", "-5"], "--total-steps"),
        (["--actors", "many"], "--actors"),
        (["--delay-range", "9", "3"], "--delay-range"),
        (["--entropy-coef-final", "-0.1"], "--entropy-coef-final"),
        (["--logdir", "/proc/no-such-dir/run"], "cannot write"),
        (["--resume", "/tmp/nalu_rl-no-such-run"], "checkpoint not found"),
        (
            ["--no-synchronous", "--actors", "1", "--buffers-per-actor", "1", "--batch-unrolls", "2"],
            "buffers",
        ),
    ],
)
def test_bad_option_exits_nonzero_with_one_line(argv: list[str], message: str, capsys) -> None:
    code, stderr = run_cli_capture(argv, capsys)
    assert code != 0
    assert stderr.count("\n") == 1 and stderr.startswith("error:")
    assert message in stderr


@pytest.mark.slow
def test_serial_learner_learns_well_above_a_random_policy(tmp_path: Path) -> None:
    run = train.run_training([*EASY, "--actors", "0", "--total-steps", "80000", "--logdir", str(tmp_path)])
    chance = random_policy_success_rate(3, (2, 3))
    assert run.window.full
    assert run.window.success_rate() >= max(2 * chance, chance + 0.15), (run.window.success_rate(), chance)
    # The run folder holds config.json, checkpoint.pt, TensorBoard events and the evaluation.
    assert (tmp_path / "config.json").is_file() and (tmp_path / "checkpoint.pt").is_file()
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path))
    payload = load_checkpoint(tmp_path)
    assert payload["config"]["env"]["delay_range"] == [2, 3] and payload["steps"] == run.steps


@pytest.mark.slow
@pytest.mark.parametrize("runtime", sorted(ONE_PROCESS_RUNTIMES))
def test_stops_when_the_target_success_rate_is_reached(tmp_path: Path, runtime: str) -> None:
    run = train.run_training(
        [
            *EASY,
            *ONE_PROCESS_RUNTIMES[runtime],
            "--total-steps",
            "1000000",
            "--target-fraction",
            "0.05",
            "--logdir",
            str(tmp_path),
        ]
    )
    assert run.stop_reason.startswith("target reached")
    assert run.steps < 1_000_000


def test_without_actor_processes_the_learner_scores_the_actions_as_the_actor_did(tmp_path: Path) -> None:
    """With --actors 0 there is no policy lag: the learner's log-probabilities of the taken actions
    match the actor's, so V-trace's ratios are 1 and its correction does nothing."""
    run = train.run_training([*EASY, "--actors", "0", "--total-steps", "3200", "--logdir", str(tmp_path)])
    assert run.updates > 0
    assert run.last_metrics["loss/policy_log_ratio"] < 1e-5


def test_progress_bar_into_a_log_file_is_not_redrawn_on_every_update(tmp_path, capsys) -> None:
    dashboard = Dashboard(tmp_path, total_steps=100_000, start_steps=0, progress=True)
    window = EpisodeWindow(2, ceilings=[1.0], target_fraction=0.9)
    window.add(np.array([5, 6]), np.array([True, False]), np.array([1.0, -1.0]))
    for update in range(1, 201):
        dashboard.show(update * 500, window)
    dashboard.close({"agent": "nac"}, {"success_rate": 0.5})
    drawn = capsys.readouterr().err
    # stderr is not a terminal here: the bar is drawn at its start and close, not 200 times
    assert drawn.count("\r") <= 4, drawn.count("\r")
    assert "SPS" in drawn and "success 0.50" in drawn


def test_list_agents_prints_every_agent_with_its_shipped_checkpoints(capsys) -> None:
    from nalu_rl.agents import agent_names

    assert train.main(["--list-agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(agent_names())
    assert "nac-pixels" in rows["nac"] and "lstm-pixels" in rows["lstm"]
    assert "learned-count-interval-pixels" in rows["learned-count"]
    assert rows["nac-paper"].split()[1] == "-"  # nothing shipped for it


def test_help_names_the_agents(capsys) -> None:
    with pytest.raises(SystemExit):
        train.main(["--help"])
    from nalu_rl.agents import agent_names

    help_text = "".join(capsys.readouterr().out.split())  # argparse wraps lines, at hyphens too
    assert all(name in help_text for name in agent_names())


def test_tensorboard_holds_the_figure_a_clip_and_the_unit_weights_after_a_run(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    argv = [*EASY, "--agent", "nac", "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)]
    argv += ["--eval-episodes", "2", "--eval-max-delay", "3"]
    with pytest.raises(SystemExit) as exit_info:
        run_cli(train.main, argv)
    assert exit_info.value.code == 0
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "histograms": 0})
    events.Reload()
    images = events.Tags()["images"]
    assert "evaluation/success_by_delay" in images and "evaluation/episode" in images
    clip = events.Images("evaluation/episode")[0].encoded_image_string
    assert clip[:6] in (b"GIF87a", b"GIF89a")
    histograms = events.Tags()["histograms"]
    assert any(tag.startswith("units/") and tag.endswith(".weight") for tag in histograms), histograms


def test_regularizer_gate_holds_the_ramp_until_the_success_reaches_it(tmp_path: Path) -> None:
    gated = [*EASY, "--agent", "nau-saturated-count", "--actors", "0", "--total-steps", "3000"]
    gated += ["--regularizer-start-steps", "0", "--regularizer-end-steps", "0"]  # full weight at once
    gate = "--regularizer-gate-success"
    closed = train.run_training([*gated, gate, "1.0", "--logdir", str(tmp_path / "a")])
    assert closed.regularizer_steps() == -1 and closed.last_metrics["loss/regularizer_weight"] == 0.0
    assert load_checkpoint(tmp_path / "a")["regularizer_opened_at"] == -1
    opened = train.run_training([*gated, gate, "1e-9", "--logdir", str(tmp_path / "b")])
    assert 0 < opened.regularizer_opened_at < opened.steps  # once the success window was full
    assert opened.last_metrics["loss/regularizer_weight"] == 0.1
    resumed = train.run_training(["--resume", str(tmp_path / "b"), "--total-steps", "4000"])
    assert resumed.regularizer_opened_at == opened.regularizer_opened_at
    ungated = train.run_training([*EASY, "--actors", "0", "--total-steps", "2000", "--logdir", str(tmp_path)])
    assert ungated.regularizer_steps() == ungated.steps
    with pytest.raises(InputError, match="regularizer-gate-success"):
        validate(Config(regularizer_gate_success=1.5))


def test_a_falling_success_closes_the_regularizer_gate_and_its_return_opens_it_afresh() -> None:
    config = Config(regularizer_gate_success=0.9, regularizer_gate_fall=0.5, success_window=10)
    progress = RunProgress(config, [1.0])
    delays = [5] * 10
    progress.record_steps(100, delays, [True] * 10, [1.0] * 10)
    assert progress.regularizer_steps() == 0  # opened at step 100
    progress.record_steps(100, delays[:4], [False] * 4, [0.0] * 4)
    assert progress.regularizer_steps() == 100  # 0.6 of the window: above the fall, still open
    progress.record_steps(100, delays[:2], [False] * 2, [0.0] * 2)
    assert progress.regularizer_steps() == -1 and progress.counters.regularizer_closings == 1
    assert progress.state()["regularizer_opened_at"] == -1
    progress.record_steps(100, delays, [True] * 10, [1.0] * 10)
    assert progress.regularizer_steps() == 0 and progress.regularizer_opened_at == 400
    never_closes = RunProgress(Config(regularizer_gate_success=0.9, success_window=10), [1.0])
    never_closes.record_steps(100, delays, [True] * 10, [1.0] * 10)
    assert never_closes.regularizer_steps() == 0
    never_closes.record_steps(100, delays, [False] * 10, [0.0] * 10)
    assert never_closes.regularizer_steps() == 100
    with pytest.raises(InputError, match="regularizer-gate-fall"):
        validate(Config(regularizer_gate_success=0.5, regularizer_gate_fall=0.5))


def test_a_handover_follows_the_regularizer_or_ramps_after_it() -> None:
    follows = Config(regularizer_start_steps=100, regularizer_end_steps=300)
    assert ramps(follows, -1) == (0.0, 0.0) and ramps(follows, 200) == (0.5, 0.5)
    after = Config(regularizer_start_steps=100, regularizer_end_steps=300, handover_steps=400)
    assert ramps(after, 200) == (0.5, 0.0)
    assert ramps(after, 500) == (1.0, 0.5) and ramps(after, 700) == (1.0, 1.0)
    with pytest.raises(InputError, match="handover-steps"):
        validate(Config(handover_steps=-1))


def test_the_entropy_bonus_falls_on_a_straight_line_to_its_final_weight(tmp_path: Path) -> None:
    schedule = Config(entropy_coef=0.02, entropy_coef_final=0.0, total_steps=1000)
    assert [schedule.entropy_coef_at(steps) for steps in (0, 250, 1000, 5000)] == [0.02, 0.015, 0.0, 0.0]
    assert Config(entropy_coef=0.02).entropy_coef_at(10**9) == 0.02  # no final weight: constant
    # A run that stops at its (tiny) success target long before its budget: its last update used the
    # line's weight at the steps counted by then.
    argv = [*EASY, "--actors", "0", "--total-steps", "100000", "--target-fraction", "0.01"]
    argv += ["--entropy-coef", "0.05"]
    falling = train.run_training([*argv, "--entropy-coef-final", "0", "--logdir", str(tmp_path / "a")])
    assert falling.steps < 100000
    expected = 0.05 * (1 - falling.steps / 100000)
    assert falling.last_metrics["loss/entropy_coef"] == pytest.approx(expected)
    constant = train.run_training([*argv, "--logdir", str(tmp_path / "b")])
    assert constant.last_metrics["loss/entropy_coef"] == 0.05


def test_the_seed_fixes_the_initial_weights(tmp_path: Path) -> None:
    def initial_weights(seed: str, folder: str) -> dict[str, torch.Tensor]:
        config, given = parse_config([*EASY, "--seed", seed, "--logdir", str(tmp_path / folder)])
        config, logdir, payload = open_run_folder(config, given)
        torch.rand(7)  # whatever ran before in the process must not matter
        return TrainingRun(config, logdir, payload).model.state_dict()

    first, again, other = initial_weights("3", "a"), initial_weights("3", "b"), initial_weights("4", "c")
    assert all(torch.equal(first[name], again[name]) for name in first)
    assert not all(torch.equal(first[name], other[name]) for name in first)


def test_the_default_agent_trains_with_the_options_of_its_measured_runs() -> None:
    config, given = parse_config([])
    assert config.agent == "learned-count" and not given
    for name, value in agent_training_defaults("learned-count").items():
        assert getattr(config, name) == value
    assert config.unit_lr_scale == 10.0 and config.regularizer_gate_success == 0.25


def test_options_given_on_the_command_line_win_over_the_agents_defaults() -> None:
    config, _ = parse_config(["--agent", "signed-count", "--unit-lr-scale", "3", "--total-steps", "1000"])
    assert config.unit_lr_scale == 3.0 and config.total_steps == 1000
    assert config.regularizer_gate_success == 0.5  # not given: still the agent's
    plain, _ = parse_config(["--agent", "nac"])
    assert plain.unit_lr_scale == Config.unit_lr_scale == 1.0
    assert plain.total_steps == Config.total_steps and plain.regularizer_gate_success == 0.0


def test_hogwild_with_the_gated_default_says_how_to_run_it() -> None:
    hogwild = ["--agent", "signed-count", "--runtime", "hogwild"]
    with pytest.raises(InputError, match="give --regularizer-gate-success 0"):
        validate(parse_config(hogwild)[0])
    validate(parse_config([*hogwild, "--regularizer-gate-success", "0"])[0])


def test_a_second_ctrl_c_while_the_first_is_reported_keeps_exit_code_130() -> None:
    # The child's stderr sends it SIGINT as "interrupted" is written: the second Ctrl-C lands exactly
    # while run_cli reports the first (a sweep's trial gets the terminal's SIGINT and the sweep's).
    script = (
        "import os, signal, sys\n"
        "from nalu_rl.cli import run_cli\n"
        "class InterruptingStderr:\n"
        "    def write(self, text):\n"
        "        if 'interrupted' in text:\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return sys.__stderr__.write(text)\n"
        "    def flush(self):\n"
        "        sys.__stderr__.flush()\n"
        "def main(argv):\n"
        "    sys.stderr = InterruptingStderr()\n"
        "    raise KeyboardInterrupt  # the first Ctrl-C, in the middle of the command\n"
        "run_cli(main)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 130, (result.returncode, result.stderr[-500:])
    assert result.stderr.strip() == "interrupted"


@pytest.mark.parametrize(
    ("argv", "separate"),
    [
        (["--agent", "lstm", "--env-id", "CartPole-v1"], True),  # auto, on an env users bring
        (["--agent", "lstm", "--env-id", "CartPole-v1", "--separate-critic", "off"], False),
        (["--agent", "lstm"], False),  # a timing task: the critic of the measured runs
        (["--agent", "lstm", "--separate-critic", "on"], True),
        (["--agent", "nac", "--env-id", "CartPole-v1"], False),  # its critic reads the count
    ],
)
def test_a_run_gives_the_critic_a_core_of_its_own_where_asked_and_where_it_fits(
    argv: list[str], separate: bool, tmp_path: Path
) -> None:
    config, _ = parse_config([*argv, "--actors", "0"])
    validate(config)
    run = TrainingRun(config, tmp_path / "run")
    assert run.model.wiring.critic_separate is separate
    assert run.model.state_names[-1].startswith("critic_") is separate


def test_a_critic_of_its_own_for_an_agent_without_a_memory_core_is_refused_in_one_line() -> None:
    config, _ = parse_config(
        ["--agent", "count-mixture", "--env-id", "CartPole-v1", "--separate-critic", "on"]
    )
    with pytest.raises(InputError, match="copies the memory core"):
        validate(config)
