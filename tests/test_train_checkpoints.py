"""`python -m nalu_rl.train`: checkpoints and resume: what a run keeps, what a resume changes or refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import EASY, ONE_PROCESS_RUNTIMES, run_cli_capture

from nalu_rl import train
from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.config import parse_config
from nalu_rl.runtime.run import TrainingRun


def test_corrupt_checkpoint_is_refused_with_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint at all")
    code, stderr = run_cli_capture(["--resume", str(tmp_path)], capsys)
    assert code == 2
    assert stderr.count("\n") == 1 and "cannot read checkpoint" in stderr and "corrupt" in stderr


def test_checkpoint_holding_pickled_objects_is_refused(tmp_path: Path) -> None:
    # A pickled class instance: torch.load(weights_only=True) must refuse it; run in a child so the
    # test sees exactly what a user sees.
    script = (
        "import collections, torch\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
        f"torch.save({{'format': 'nalu_rl-checkpoint-1', 'config': {{}}, 'model': {{}}, "
        f"'evil': Point(1, 2)}}, {str(tmp_path / 'checkpoint.pt')!r})\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    result = subprocess.run(
        [sys.executable, "-m", "nalu_rl.train", "--resume", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot read checkpoint" in result.stderr
    assert "objects other than weights" in result.stderr


@pytest.mark.parametrize("runtime", sorted(ONE_PROCESS_RUNTIMES))
def test_resume_continues_step_count_and_optimizer(tmp_path: Path, runtime: str) -> None:
    one_process = ONE_PROCESS_RUNTIMES[runtime]
    first = train.run_training([*EASY, *one_process, "--total-steps", "3000", "--logdir", str(tmp_path)])
    saved = load_checkpoint(tmp_path)
    second = train.run_training(["--resume", str(tmp_path), "--total-steps", "6000"])
    assert second.config.runtime == first.config.runtime == saved["config"]["runtime"]
    assert second.start_steps == first.steps == saved["steps"]
    assert second.steps >= 6000
    resumed = load_checkpoint(tmp_path)
    assert resumed["steps"] == second.steps and resumed["updates"] == first.updates + (
        second.updates - first.updates
    )
    # Adam's step count carried on from the first run instead of restarting at zero.
    adam_steps = resumed["optimizer"]["state"][0]["step"]
    assert float(adam_steps) == second.updates > first.updates


def test_resume_applies_a_new_learning_rate_and_adam_epsilon(tmp_path: Path) -> None:
    first = train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    assert [group["eps"] for group in first.optimizer.param_groups] == [1e-8]
    argv = ["--resume", str(tmp_path), "--total-steps", "1280", "--learning-rate", "1e-5"]
    argv += ["--adam-eps", "1e-4"]
    resumed = train.run_training(argv)
    assert [group["lr"] for group in resumed.optimizer.param_groups] == [1e-5]
    assert [group["eps"] for group in resumed.optimizer.param_groups] == [1e-4]
    saved = load_checkpoint(tmp_path)
    assert saved["config"]["learning_rate"] == 1e-5
    assert [group["lr"] for group in saved["optimizer"]["param_groups"]] == [1e-5]
    assert [group["eps"] for group in saved["optimizer"]["param_groups"]] == [1e-4]


def test_the_units_weights_learn_at_their_own_rate_and_keep_it_on_resume(tmp_path: Path) -> None:
    from nalu_rl.units import ArithmeticUnit

    argv = [*EASY, "--agent", "signed-count", "--unit-lr-scale", "10"]
    run = TrainingRun(parse_config([*argv, "--actors", "0"])[0], tmp_path / "probe")
    model, optimizer = run.model, run.optimizer
    unit_ids = {id(p) for m in model.modules() if isinstance(m, ArithmeticUnit) for p in m.parameters()}
    others, units = optimizer.param_groups
    assert unit_ids and {id(p) for p in units["params"]} == unit_ids
    assert not unit_ids & {id(p) for p in others["params"]}
    assert (others["lr"], units["lr"]) == (3e-3, pytest.approx(3e-2))
    # Adam's first step moves every weight by about its group's rate.
    unit_weight = units["params"][0]
    before = unit_weight.detach().clone()
    sum(p.sum() for p in model.parameters()).backward()
    optimizer.step()
    assert torch.allclose((unit_weight.detach() - before).abs(), torch.tensor(3e-2), rtol=1e-3)

    train.run_training([*argv, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path / "run")])
    resume = ["--resume", str(tmp_path / "run"), "--total-steps", "1280", "--learning-rate", "1e-5"]
    resumed = train.run_training(resume)
    assert [group["lr"] for group in resumed.optimizer.param_groups] == [1e-5, pytest.approx(1e-4)]


def test_resume_refuses_to_change_the_task(tmp_path: Path, capsys) -> None:
    train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    code, stderr = run_cli_capture(["--resume", str(tmp_path), "--size", "5"], capsys)
    assert code == 2 and "--size" in stderr


def test_new_run_into_a_folder_with_a_checkpoint_is_refused(tmp_path: Path, capsys) -> None:
    train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    before = (tmp_path / "checkpoint.pt").read_bytes()
    capsys.readouterr()
    code, stderr = run_cli_capture([*EASY, "--actors", "0", "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "--resume" in stderr and len(stderr.strip().splitlines()) == 1
    assert (tmp_path / "checkpoint.pt").read_bytes() == before


@pytest.mark.parametrize("runtime", sorted(ONE_PROCESS_RUNTIMES))
def test_nan_losses_in_a_row_stop_the_run_and_keep_the_last_good_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, runtime: str
) -> None:
    one_process = ONE_PROCESS_RUNTIMES[runtime]
    train.run_training([*EASY, *one_process, "--total-steps", "640", "--logdir", str(tmp_path)])
    good = load_checkpoint(tmp_path)
    from nalu_rl.runtime import update

    real_loss = update.compute_loss

    def nan_loss(*args, **kwargs):
        total, extras = real_loss(*args, **kwargs)
        extras["loss/total"] = float("nan")
        return total * float("nan"), extras

    monkeypatch.setattr(update, "compute_loss", nan_loss)
    code, stderr = run_cli_capture(
        ["--resume", str(tmp_path), "--total-steps", "100000", "--max-bad-updates", "3"], capsys
    )
    assert code == 1
    assert "3 updates in a row had a NaN/inf loss" in stderr
    kept = load_checkpoint(tmp_path)
    assert kept["steps"] == good["steps"]
    assert all(torch.equal(kept["model"][key], good["model"][key]) for key in good["model"])


def test_checkpoint_loads_with_its_own_wiring_after_the_registry_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from nalu_rl.agents import registry
    from nalu_rl.checkpoint import load_agent

    argv = [*EASY, "--agent", "nac", "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)]
    train.run_training(argv)
    trained = registry.agent_wiring("nac")
    moved = replace(trained, counter_size=trained.counter_size + 2)
    monkeypatch.setitem(registry.AGENTS, "nac", replace(registry.agent_spec("nac"), wiring=moved))
    model, config = load_agent(tmp_path / "checkpoint.pt")
    assert config["agent"] == "nac"
    assert model.wiring == trained != registry.agent_wiring("nac")
    assert load_checkpoint(tmp_path)["wiring"] == trained.to_dict()


def test_resume_continues_with_the_runs_own_wiring_after_the_registry_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from dataclasses import replace

    from nalu_rl.agents import registry

    train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    trained = registry.agent_wiring("lstm")
    moved = replace(trained, actor_hidden=16)
    monkeypatch.setitem(registry.AGENTS, "lstm", replace(registry.agent_spec("lstm"), wiring=moved))
    capsys.readouterr()
    code, stderr = run_cli_capture(["--resume", str(tmp_path), "--total-steps", "1920"], capsys)
    assert code == 0, stderr
    resumed = load_checkpoint(tmp_path)
    assert resumed["steps"] >= 1920
    assert resumed["wiring"] == trained.to_dict() != moved.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["learner", "hogwild"])
def test_worker_processes_build_the_runs_wiring_not_their_own_registrys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: str
) -> None:
    """The parent's registry is patched; spawned workers import an unpatched one, so only a wiring
    handed to them by the run gives them the model the run trains."""
    from dataclasses import replace

    from nalu_rl.agents import registry

    moved = replace(registry.agent_wiring("lstm"), actor_hidden=16)
    monkeypatch.setitem(registry.AGENTS, "lstm", replace(registry.agent_spec("lstm"), wiring=moved))
    argv = [*EASY, "--runtime", runtime, "--actors", "1", "--total-steps", "1280", "--logdir", str(tmp_path)]
    train.run_training(argv)
    trained = load_checkpoint(tmp_path)
    assert trained["steps"] >= 1280
    assert trained["wiring"] == moved.to_dict()


def test_hogwild_workers_step_the_units_own_group_with_its_shared_adam_state(tmp_path: Path) -> None:
    argv = [*EASY, "--agent", "nau-scalar-count", "--runtime", "hogwild", "--actors", "1"]
    train.run_training([*argv, "--unit-lr-scale", "10", "--total-steps", "1280", "--logdir", str(tmp_path)])
    saved = load_checkpoint(tmp_path)
    others, units = saved["optimizer"]["param_groups"]
    assert (others["lr"], units["lr"]) == (3e-3, pytest.approx(3e-2)) and len(units["params"]) == 1
    # Every parameter's Adam moments have its own shape: states were matched to parameters in group order.
    states = saved["optimizer"]["state"]
    assert all(float(state["step"]) > 0 for state in states.values())
    state_shapes = sorted(tuple(state["exp_avg"].shape) for state in states.values())
    assert state_shapes == sorted(tuple(tensor.shape) for tensor in saved["model"].values())


def test_resume_refuses_a_checkpoint_with_an_invalid_wiring(tmp_path: Path, capsys) -> None:
    from nalu_rl.checkpoint import save_checkpoint

    train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    payload = load_checkpoint(tmp_path)
    payload["wiring"]["counter"] = "abacus"
    save_checkpoint(tmp_path / "checkpoint.pt", payload)
    capsys.readouterr()
    code, stderr = run_cli_capture(["--resume", str(tmp_path), "--total-steps", "1280"], capsys)
    assert code == 2 and "wiring is invalid" in stderr and len(stderr.strip().splitlines()) == 1


def test_resume_says_which_step_it_resumes_from(tmp_path: Path, capsys) -> None:
    first = train.run_training([*EASY, "--actors", "0", "--total-steps", "640", "--logdir", str(tmp_path)])
    capsys.readouterr()
    train.run_training(["--resume", str(tmp_path), "--total-steps", "1280"])
    assert f"from step {first.steps:,}" in capsys.readouterr().err


def test_best_pt_holds_the_model_at_the_best_recent_training_score_and_resume_keeps_it(
    tmp_path: Path, capsys
) -> None:
    from nalu_rl.runtime import run as run_module

    argv = [*EASY, "--actors", "0", "--total-steps", "6000", "--logdir", str(tmp_path)]
    first = train.run_training(argv)
    best = load_checkpoint(tmp_path / "best.pt")
    assert first.best_score is not None and first.best_score >= first.window.success_rate()
    assert best["best"] == {"score": first.best_score, "steps": first.best_steps}
    assert best["steps"] == first.best_steps <= first.steps
    assert load_checkpoint(tmp_path / "checkpoint.pt")["best"] == best["best"]
    assert f"best.pt: the best recent success, {first.best_score:.3f}" in capsys.readouterr().err
    # A window that scores no better than the best leaves best.pt alone; a better one replaces it.
    first.window.successes.clear()
    first.window.successes.extend([False] * first.window.capacity)
    assert not first.save_if_best()
    first.window.successes.extend([True] * first.window.capacity)
    assert first.save_if_best() and first.best_score == 1.0
    assert load_checkpoint(tmp_path / "best.pt")["best"]["score"] == 1.0
    # checkpoint.pt still records the earlier best; the resumed run takes best.pt's newer one.
    resumed = train.run_training(["--resume", str(tmp_path), "--total-steps", "7000"])
    assert resumed.best_score == 1.0
    assert load_checkpoint(tmp_path / "best.pt")["best"]["score"] == 1.0
    assert run_module.BEST_CHECKPOINT == "best.pt"
