"""A checkpoint never runs code by itself: the modules a run records (`config["imports"]`, an env id
"module:Env-v0") are imported only when the user names them with --import or accepts them with
--trust-imports, in evaluate, render, counter, train --resume and the Python API; recorded names
that are not dotted Python identifiers are refused before anything is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import TINY_ENV_KWARGS, cli_exit_code

from nalu_rl import counter, evaluate, render, train
from nalu_rl.agents import make_agent
from nalu_rl.checkpoint import load_agent, load_checkpoint, save_checkpoint
from nalu_rl.envs import TimeTrackEnv
from nalu_rl.errors import InputError
from nalu_rl.plugins import UnconsentedImportsError, check_module_name

MODULE = "evil_mod"  # the module a downloaded run folder records and ships beside its checkpoint
MARK = "evil_mod_ran.txt"  # what that module writes, beside itself, when it is imported
# The module's code: leave a mark, so a test can tell whether it ran.
MODULE_SOURCE = f"from pathlib import Path\nPath(__file__).with_name({MARK!r}).write_text('ran')\n"


@pytest.fixture
def downloaded_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A run folder as a user downloads it: a checkpoint recording `evil_mod` among its imports, and
    evil_mod.py beside it, in the current folder (where `python -m` looks for modules)."""
    (tmp_path / f"{MODULE}.py").write_text(MODULE_SOURCE)
    run = write_checkpoint_recording(tmp_path / "dl_run", [MODULE])
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield run
    sys.modules.pop(MODULE, None)


def write_checkpoint_recording(folder: Path, imports: list, env_id: str | None = None) -> Path:
    """A tiny untrained lstm checkpoint in `folder` whose config records `imports` (and `env_id`)."""
    folder.mkdir()
    torch.manual_seed(0)
    model = make_agent("lstm", TimeTrackEnv(**TINY_ENV_KWARGS).observation_space)
    config = {"agent": "lstm", "seed": 0, "env": TINY_ENV_KWARGS, "imports": imports}
    if env_id is not None:
        config["env_id"] = env_id
    save_checkpoint(folder / "checkpoint.pt", {"config": config, "model": model.state_dict()})
    return folder


def command_lines(run: Path, out: Path) -> dict:
    """evaluate, render and counter of `run`, each with the options that make it short."""
    return {
        "evaluate": (
            evaluate.main,
            ["--checkpoint", str(run), "--delays", "5", "--episodes", "2", "--out", str(out / "eval")],
        ),
        "render": (
            render.main,
            ["--checkpoint", str(run), "--episodes", "1", "--record", str(out / "r.gif")],
        ),
        "counter": (
            counter.main,
            ["--checkpoint", str(run), "--delays", "5", "--episodes", "1", "-o", str(out / "c.png")],
        ),
    }  # fmt: skip


@pytest.mark.parametrize("command", ["evaluate", "render", "counter"])
def test_a_recorded_module_is_not_imported_unnamed_and_the_command_says_how_on(
    command: str, downloaded_run: Path, tmp_path: Path, capsys
) -> None:
    main, argv = command_lines(downloaded_run, tmp_path)[command]
    assert cli_exit_code(main, argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("error: "), error
    assert f"--import {MODULE}" in error and "--trust-imports" in error
    assert not (tmp_path / MARK).exists(), "the recorded module ran"
    assert MODULE not in sys.modules
    assert not any(path.name in ("eval", "r.gif", "c.png") for path in tmp_path.iterdir()), "it wrote output"


@pytest.mark.parametrize("consent", [["--import", MODULE], ["--trust-imports"]], ids=["named", "trusted"])
@pytest.mark.parametrize("command", ["evaluate", "render", "counter"])
def test_a_recorded_module_named_or_trusted_is_imported_and_the_checkpoint_loads(
    command: str, consent: list[str], downloaded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    main, argv = command_lines(downloaded_run, tmp_path)[command]
    assert cli_exit_code(main, [*argv, *consent]) == 0
    assert (tmp_path / MARK).read_text() == "ran"


def test_the_downloaded_run_scenario_from_its_folder_writes_nothing_and_exits_2(downloaded_run: Path) -> None:
    """The scenario as a user meets it: `python -m nalu_rl.evaluate --checkpoint dl_run --delays 5` run
    from the folder that holds the run and the module."""
    folder = downloaded_run.parent
    command = [sys.executable, "-m", "nalu_rl.evaluate", "--checkpoint", "dl_run", "--delays", "5"]
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert MODULE in result.stderr
    assert not (folder / MARK).exists() and not (folder / "eval").exists()


@pytest.mark.parametrize(
    "name", ["../evil_mod", "sub/evil_mod", "sub\\evil_mod", "evil..mod", "evil mod", "evil_mod\n", ""]
)
def test_a_recorded_name_that_is_not_a_dotted_identifier_is_refused_even_when_trusted(
    name: str, tmp_path: Path, capsys
) -> None:
    run = write_checkpoint_recording(tmp_path / "run", [name])
    argv = ["--checkpoint", str(run), "--delays", "5", "--out", str(tmp_path), "--trust-imports"]
    assert cli_exit_code(evaluate.main, argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not a dotted Python identifier" in error, error


def test_dotted_module_names_are_accepted() -> None:
    assert check_module_name("my_lab.envs") == "my_lab.envs"
    with pytest.raises(InputError, match="dotted Python identifier"):
        check_module_name("my_lab/envs")


def test_an_env_id_naming_a_module_needs_the_same_consent(tmp_path: Path, monkeypatch) -> None:
    """gymnasium.make imports the module of an id written "module:Env-v0": such an id is a recorded
    module too."""
    (tmp_path / f"{MODULE}.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    run = write_checkpoint_recording(tmp_path / "run", [], env_id=f"{MODULE}:CartPole-v1")
    with pytest.raises(UnconsentedImportsError) as refusal:
        load_agent(run)
    assert refusal.value.modules == [MODULE] and not (tmp_path / MARK).exists()
    assert MODULE not in sys.modules


def test_the_python_api_takes_the_allowed_modules_or_trust(downloaded_run: Path, tmp_path: Path) -> None:
    with pytest.raises(UnconsentedImportsError) as refusal:
        load_agent(downloaded_run)
    assert refusal.value.modules == [MODULE] and not (tmp_path / MARK).exists()
    model, config = load_agent(downloaded_run, allowed_imports=[MODULE])
    assert (tmp_path / MARK).exists() and config["imports"] == [MODULE]
    (tmp_path / MARK).unlink()
    sys.modules.pop(MODULE)
    load_agent(downloaded_run, trust_imports=True)
    assert (tmp_path / MARK).exists()


def test_every_shipped_checkpoint_loads_with_no_flag() -> None:
    from nalu_rl.checkpoint import shipped_checkpoint, shipped_checkpoint_names

    for name in shipped_checkpoint_names():
        model, config = load_agent(shipped_checkpoint(name))
        assert not config.get("imports"), name


def test_train_resume_imports_the_runs_modules_only_when_named_or_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    (tmp_path / f"{MODULE}.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    run = tmp_path / "run"
    tiny = ["--obs", "symbolic", "--actors", "0", "--envs-per-actor", "4", "--unroll-length", "5"]
    tiny += ["--no-progress", "--eval-episodes", "0"]
    try:
        train.run_training(
            ["--import", MODULE, *tiny, "--agent", "lstm", "--total-steps", "40", "--logdir", str(run)]
        )
        assert load_checkpoint(run)["config"]["imports"] == [MODULE]
        # As in a fresh process: the module is not loaded and has left no mark.
        sys.modules.pop(MODULE)
        (tmp_path / MARK).unlink()
        capsys.readouterr()  # the first run's report
        resume = ["--resume", str(run), "--total-steps", "80", "--no-progress"]
        assert cli_exit_code(train.main, resume) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and f"--import {MODULE}" in error, error
        assert not (tmp_path / MARK).exists()
        assert cli_exit_code(train.main, [*resume, "--trust-imports"]) == 0
        assert (tmp_path / MARK).exists() and load_checkpoint(run)["steps"] >= 80
        # Named again, it resumes too; the consent is not recorded in the run.
        sys.modules.pop(MODULE)
        assert (
            cli_exit_code(train.main, ["--resume", str(run), "--total-steps", "120", "--import", MODULE]) == 0
        )
        assert "trust_imports" not in load_checkpoint(run)["config"]
    finally:
        sys.modules.pop(MODULE, None)
