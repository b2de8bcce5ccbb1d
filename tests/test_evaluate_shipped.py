from pathlib import Path

import pytest

import nalu_rl.evaluate as evaluate
from agents import Wiring, make_agent
from envs import TimeTrackEnv
from nalu_rl.checkpoint import load_agent, load_checkpoint, save_checkpoint
from nalu_rl.cli import run_cli

SHIPPED = sorted((Path(evaluate.__file__).resolve().parent.parent / "checkpoints").glob("*.pt"))


@pytest.mark.parametrize("path", SHIPPED, ids=[path.stem for path in SHIPPED])
def test_shipped_checkpoints_load_with_weights_only(path):
    model, config = load_agent(path)  # torch.load(..., weights_only=True) inside
    # checkpoints/<agent>.pt, or <agent>-<obs>.pt beside it for another observation mode
    assert path.stem in (config["agent"], f"{config['agent']}-{config['obs']}")
    assert not model.training
    # The file names its own wiring, so it keeps loading if the registry's name moves on.
    assert Wiring.from_dict(load_checkpoint(path)["wiring"]) == model.wiring


def test_agent_option_evaluates_the_shipped_checkpoint(tmp_path, monkeypatch):
    env_kwargs = {"size": 5, "obs_mode": "symbolic"}
    model = make_agent("nac", TimeTrackEnv(**env_kwargs).observation_space)
    config = {"agent": "nac", "obs": "symbolic", "seed": 0, "delay_range": [5, 12], "env": env_kwargs}
    save_checkpoint(tmp_path / "checkpoints" / "nac.pt", {"config": config, "model": model.state_dict()})
    monkeypatch.setattr(evaluate, "REPOSITORY_ROOT", tmp_path)
    assert evaluate.shipped_checkpoint("nac") == tmp_path / "checkpoints" / "nac.pt"
    with pytest.raises(SystemExit) as exit_info:
        run_cli(
            evaluate.main,
            ["--agent", "nac", "--delays", "6", "--episodes", "4", "--out", str(tmp_path / "e")],
        )
    assert exit_info.value.code == 0
    assert (tmp_path / "e" / "success_by_delay.csv").read_text().splitlines()[1].startswith("nac,6,4,")
    with pytest.raises(evaluate.CliError, match="shipped: nac"):
        evaluate.shipped_checkpoint("lstm")
