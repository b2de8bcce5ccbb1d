import zipfile
from pathlib import Path

import pytest

import nalu_rl.checkpoint as checkpoint
import nalu_rl.evaluate as evaluate
from nalu_rl.agents import Wiring, make_agent
from nalu_rl.checkpoint import load_agent, load_checkpoint, save_checkpoint
from nalu_rl.cli import run_cli
from nalu_rl.envs import TimeTrackEnv
from nalu_rl.errors import CheckpointError

SHIPPED = sorted(checkpoint.SHIPPED_FOLDER.glob("*.pt"))


def test_checkpoints_are_shipped_inside_the_package():
    assert Path(checkpoint.__file__).resolve().parent / "checkpoints" == checkpoint.SHIPPED_FOLDER
    assert {"nac", "lstm", "nac-pixels", "lstm-pixels"} <= set(checkpoint.shipped_checkpoint_names())


@pytest.mark.parametrize("path", SHIPPED, ids=[path.stem for path in SHIPPED])
def test_shipped_checkpoints_load_with_weights_only(path):
    model, config = load_agent(path)  # torch.load(..., weights_only=True) inside
    # <agent>.pt on symbolic TimeTrack; -interval names IntervalTiming, -pixels the pixel observations
    # (checkpoint.SHIPPED_SUFFIXES)
    task = {"nalu_rl/TimeTrack-v0": "", "nalu_rl/IntervalTiming-v0": "-interval"}[
        config.get("env_id", "nalu_rl/TimeTrack-v0")
    ]
    assert path.stem == config["agent"] + task + ("-pixels" if config["obs"] == "pixels" else "")
    assert not model.training
    # The file names its own wiring, so it keeps loading if the registry's name moves on.
    assert Wiring.from_dict(load_checkpoint(path)["wiring"]) == model.wiring


def test_agent_option_evaluates_the_shipped_checkpoint(tmp_path, monkeypatch):
    env_kwargs = {"size": 5, "obs_mode": "symbolic"}
    model = make_agent("nac", TimeTrackEnv(**env_kwargs).observation_space)
    config = {"agent": "nac", "obs": "symbolic", "seed": 0, "delay_range": [5, 12], "env": env_kwargs}
    save_checkpoint(tmp_path / "shipped" / "nac.pt", {"config": config, "model": model.state_dict()})
    monkeypatch.setattr(checkpoint, "SHIPPED_FOLDER", tmp_path / "shipped")
    monkeypatch.chdir(tmp_path)  # found from any working directory
    assert checkpoint.shipped_checkpoint("nac") == tmp_path / "shipped" / "nac.pt"
    with pytest.raises(SystemExit) as exit_info:
        run_cli(
            evaluate.main,
            ["--agent", "nac", "--delays", "6", "--episodes", "4", "--out", str(tmp_path / "e")],
        )
    assert exit_info.value.code == 0
    assert (tmp_path / "e" / "success_by_delay.csv").read_text().splitlines()[1].startswith("nac,6,4,")
    with pytest.raises(CheckpointError, match="shipped: nac"):
        checkpoint.shipped_checkpoint("lstm")


@pytest.mark.slow
def test_the_built_wheel_installs_one_namespace_with_the_shipped_checkpoints(tmp_path):
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    source = tmp_path / "source"  # a copy, so that the build leaves nothing in the checkout
    ignore = shutil.ignore_patterns(".git", ".venv", "runs", "build", "*.egg-info", "__pycache__")
    shutil.copytree(root, source, ignore=ignore)
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation"]
    build = subprocess.run([*command, "-w", str(tmp_path)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("nalu_rl-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in SHIPPED:
        assert f"nalu_rl/checkpoints/{path.name}" in names
    modules = ("runtime/learner.py", "units/nac.py", "agents/cores.py", "envs/rules.py", "sweep/trial.py")
    for module in modules:
        assert f"nalu_rl/{module}" in names
    # One installed namespace: nothing named envs or agents at the top of site-packages.
    assert {name.split("/")[0] for name in names if not name.startswith("nalu_rl-")} == {"nalu_rl"}
