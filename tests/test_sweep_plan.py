"""`python -m nalu_rl.sweep`: bad input is one line and starts nothing; a plan finds its import modules,
names a trial by its env, asks Ray for its share; --trust-imports and progress."""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_processes import (
    EXAMPLE_AGENT,
    EXAMPLES,
    TINY_TRAIN,
    checkpoint_steps,
    command_line,
    family,
    process_table,
    sweep_command,
)

from nalu_rl.cli import run_cli
from nalu_rl.sweep.__main__ import main as sweep_main
from nalu_rl.sweep.folder import TRIAL_STATUS_FILE
from nalu_rl.sweep.trial import trial_folder_name

pytest.importorskip("ray.tune")


BAD_INPUTS = {
    "unknown agent": ["--agents", "nac", "no-such-agent", "--seeds", "0"],
    "malformed seeds": ["--agents", "nac", "--seeds", "0-x"],
    "backward seed range": ["--agents", "nac", "--seeds", "4-0"],
    "empty seeds": ["--agents", "nac", "--seeds", ""],
    "no seeds": ["--agents", "nac"],
    "train option train rejects": ["--agents", "nac", "--seeds", "0", "--", "--total-steps", "-5"],
    "unknown train option": ["--agents", "nac", "--seeds", "0", "--", "--no-such-option", "1"],
    "train option the sweep owns": ["--agents", "nac", "--seeds", "0", "--", "--seed", "3"],
    "unreachable address": ["--agents", "nac", "--seeds", "0", "--address", "127.0.0.1:9"],
    "no cluster to join": ["--agents", "nac", "--seeds", "0", "--address", "auto"],
    "resume of nothing": ["--resume", "--name", "never-ran"],
}


@pytest.mark.parametrize("argv", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_one_line_exit_2_and_starts_nothing(
    argv: list[str], tmp_path: Path, capsys, monkeypatch
) -> None:
    if "auto" in argv:
        # Ray's "auto" joins any cluster it finds on this machine (a RAY_ADDRESS, the last `ray start`,
        # any running GCS process): here it finds none, whatever else runs on the machine.
        import ray._private.services

        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        no_gcs_process = functools.cache(lambda: [])  # Ray calls its cache_clear too
        monkeypatch.setattr(ray._private.services, "find_gcs_addresses", no_gcs_process)
        monkeypatch.setattr(ray._private.services, "find_bootstrap_address", lambda temp_dir: None)
    children_before = family(os.getpid(), process_table())
    started = time.monotonic()
    with pytest.raises(SystemExit) as exit_info:
        run_cli(sweep_main, ["--root", str(tmp_path), *argv])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1, error
    assert time.monotonic() - started < 120  # a bound for a hang, not a speed target
    assert not any(tmp_path.iterdir()), "a sweep folder was created"
    started_processes = family(os.getpid(), process_table()) - children_before
    assert not started_processes, [command_line(pid) for pid in started_processes]
    if "ray" in sys.modules:
        assert not sys.modules["ray"].is_initialized()


def test_without_ray_the_error_says_how_to_install_it(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(SystemExit) as exit_info:
        run_cli(sweep_main, ["--root", str(tmp_path), "--agents", "nac", "--seeds", "0"])
    assert exit_info.value.code == 2
    assert (
        capsys.readouterr().err == "error: Ray is not installed; install with `pip install -e .[cluster]`\n"
    )
    assert not any(tmp_path.iterdir())


def sweep_plan(tmp_path: Path, argv: list[str]):
    """The plan of a sweep command line, as the sweep decides it before Ray starts."""
    from nalu_rl.sweep.__main__ import build_parser, split_train_options
    from nalu_rl.sweep.plan import plan_sweep

    sweep_argv, train_options = split_train_options(["--root", str(tmp_path), *argv])
    return plan_sweep(build_parser().parse_args(sweep_argv), train_options)


def test_every_trial_finds_the_import_modules_where_the_sweep_found_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nalu_rl.sweep.plan import make_specs

    modules = tmp_path / "my_modules"
    modules.mkdir()
    (modules / "my_sweep_parts.py").write_text("")
    monkeypatch.chdir(modules)
    monkeypatch.syspath_prepend(str(modules))  # what `python -m` puts first: the folder it started in
    try:
        plan = sweep_plan(tmp_path, ["--import", "my_sweep_parts", "--agents", "lstm", "--seeds", "0"])
        (spec,) = make_specs(plan, cpus=1)
    finally:
        sys.modules.pop("my_sweep_parts", None)
    assert str(modules) in spec.python_path.split(os.pathsep)
    assert spec.train_options[:2] == ("--import", "my_sweep_parts")


def test_a_sweep_of_an_env_without_observation_modes_is_named_by_its_env(tmp_path: Path) -> None:
    from nalu_rl.sweep.plan import make_specs
    from nalu_rl.sweep.trial import train_arguments

    plan = sweep_plan(tmp_path, ["--agents", "lstm", "--seeds", "0", "--", "--env-id", "CartPole-v1"])
    assert plan.obs is None and plan.name.startswith("CartPole-v1-")
    (spec,) = make_specs(plan, cpus=1)
    assert Path(spec.folder).name == "lstm-CartPole-v1-seed0"
    assert "--obs" not in train_arguments(spec, resume=False)
    timing = sweep_plan(tmp_path, ["--agents", "lstm", "--seeds", "0", "--obs", "symbolic"])
    assert Path(make_specs(timing, cpus=1)[0].folder).name == "lstm-symbolic-seed0"


def test_obs_for_an_env_without_observation_modes_is_one_line(tmp_path: Path, capsys) -> None:
    argv = ["--root", str(tmp_path), "--agents", "lstm", "--seeds", "0", "--obs", "symbolic"]
    with pytest.raises(SystemExit) as exit_info:
        run_cli(sweep_main, [*argv, "--", "--env-id", "CartPole-v1"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "CartPole-v1 has no observation modes" in error


def test_resume_imports_the_modules_of_sweep_json_only_when_named_or_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A sweep folder is a file like a checkpoint: the modules its sweep.json names run only with consent."""
    (tmp_path / "sweep_evil.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('sweep_evil_ran.txt').write_text('ran')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "downloaded").mkdir()
    grid = {"agents": ["lstm"], "seeds": [0], "obs": "symbolic", "train_options": ["--import", "sweep_evil"]}
    (tmp_path / "downloaded" / "sweep.json").write_text(json.dumps(grid))
    resume = ["--root", str(tmp_path), "--resume", "--name", "downloaded"]
    try:
        with pytest.raises(SystemExit) as exit_info:
            run_cli(sweep_main, resume)
        assert exit_info.value.code == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "--import sweep_evil" in error and "--trust-imports" in error
        assert not (tmp_path / "sweep_evil_ran.txt").exists() and "sweep_evil" not in sys.modules
        plan = sweep_plan(tmp_path, [*resume[2:], "--trust-imports"])
        assert (tmp_path / "sweep_evil_ran.txt").exists()
        assert plan.train_options == ["--import", "sweep_evil"]  # each trial names it: it loads
    finally:
        sys.modules.pop("sweep_evil", None)


def test_trust_imports_is_an_option_of_the_sweep_not_of_its_trials(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(
            sweep_main, ["--root", str(tmp_path), "--agents", "lstm", "--seeds", "0", "--", "--trust-imports"]
        )
    assert exit_info.value.code == 2
    assert "--trust-imports is an option of the sweep" in capsys.readouterr().err


@pytest.mark.slow
def test_the_documented_sweep_of_a_users_module_from_its_folder_finishes_its_trial(tmp_path: Path) -> None:
    """`cd examples && python -m nalu_rl.sweep --import custom_core --agents ... -- ...` with a tiny budget:
    the trial, run in its own folder, finds custom_core where the sweep found it."""
    command = sweep_command(
        tmp_path,
        *["--import", "custom_core", "--agents", EXAMPLE_AGENT, "--seeds", "0", "--obs", "symbolic"],
        *["--name", "example", "--", *TINY_TRAIN, "--total-steps", "3000"],
    )
    result = subprocess.run(command, cwd=EXAMPLES, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    trial = tmp_path / "example" / trial_folder_name(EXAMPLE_AGENT, "symbolic", 0)
    assert json.loads((trial / TRIAL_STATUS_FILE).read_text())["status"] == "finished"
    config = json.loads((trial / "config.json").read_text())
    assert config["imports"] == ["custom_core"] and config["agent"] == EXAMPLE_AGENT
    assert checkpoint_steps(trial) >= 3000


def test_a_device_runtime_trial_asks_for_one_cpu_and_its_share_of_a_gpu() -> None:
    import argparse

    from nalu_rl.config import Config
    from nalu_rl.sweep.plan import SweepPlan, trial_resources

    def resources(config: Config, gpus_per_trial: float | None) -> tuple[int, float]:
        plan = SweepPlan("grid", Path("grid"), ["nac"], [0], "symbolic", [], config)
        args = argparse.Namespace(cpus_per_trial=None, gpus_per_trial=gpus_per_trial)
        return trial_resources(plan, args, {"CPU": 16.0, "GPU": 1.0})

    assert resources(Config(runtime="device", device="cuda"), 0.25) == (1, 0.25)
    assert resources(Config(runtime="device", device="cuda"), None) == (1, 1.0)
    assert resources(Config(device="cuda"), 0.5) == (3, 0.5)  # 2 actors + the learner


def test_progress_counts_the_steps_of_a_run_that_logs_no_success_rate(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    from nalu_rl.sweep.progress import TrainingProgress

    with SummaryWriter(str(tmp_path)) as writer:  # a generic env's run: its return, no success rate
        writer.add_scalar("charts/episode_return", 21.5, 4096)
    progress = TrainingProgress(tmp_path)
    progress.refresh()
    assert progress.steps == 4096 and math.isnan(progress.success_rate)
