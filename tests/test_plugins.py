"""The public plug-in API: a user's core, encoder, agent and environment go through the same registries
and options as the project's own (`register_*`, `--import`, `--env-id`)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import gymnasium
import pytest
import torch

from nalu_rl import checkpoint as checkpoint_module
from nalu_rl import train
from nalu_rl.agents import (
    Core,
    Wiring,
    agent_names,
    agent_spec,
    agent_wiring,
    make_agent,
    register_agent,
    register_core,
    register_encoder,
)
from nalu_rl.agents import registry as agent_registry
from nalu_rl.checkpoint import load_agent, load_checkpoint
from nalu_rl.config import parse_config
from nalu_rl.units import registry as unit_registry

REPOSITORY = Path(__file__).resolve().parents[1]
EXAMPLE = REPOSITORY / "examples" / "custom_core.py"
TINY = [
    "--obs",
    "symbolic",
    "--actors",
    "0",
    "--envs-per-actor",
    "8",
    "--unroll-length",
    "5",
    "--no-progress",
]


@pytest.fixture
def clean_registries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Registrations made by a test are undone after it."""
    for table in (agent_registry.CORES, agent_registry.ENCODERS, agent_registry.AGENTS):
        monkeypatch.setattr(agent_registry, _table_name(table), dict(table))
    units = dict(unit_registry.ARITHMETIC_UNITS)
    yield
    unit_registry.ARITHMETIC_UNITS.clear()
    unit_registry.ARITHMETIC_UNITS.update(units)


def _table_name(table: dict) -> str:
    return next(name for name in ("CORES", "ENCODERS", "AGENTS") if getattr(agent_registry, name) is table)


def run_command(module: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *argv], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_the_projects_own_agents_are_registry_entries_with_their_training_defaults() -> None:
    assert {"lstm", "nac", "signed-count", "lru"} <= set(agent_names())
    signed = agent_spec("signed-count")
    assert signed.training_defaults["unit_lr_scale"] == 10.0 and signed.wiring.unit == "signed-nau"
    # Every agent of the project trains the timing tasks with the A3C learner its results were measured with.
    assert agent_spec("lstm").training_defaults["algo"] == "a3c" and signed.training_defaults["algo"] == "a3c"


@pytest.mark.usefixtures("clean_registries")
def test_an_agent_registered_after_import_is_known_everywhere() -> None:
    register_agent("lstm-small", replace(agent_wiring("lstm"), memory_size=16), "A small LSTM.")
    assert "lstm-small" in agent_names()
    config, _ = parse_config(["--agent", "lstm-small", "--obs", "symbolic"])
    assert config.agent == "lstm-small"
    assert "lstm-small" in train.agents_table()


@pytest.mark.usefixtures("clean_registries")
def test_a_name_is_registered_once_unless_replaced() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_core("lstm", lambda *args: None)
    with pytest.raises(ValueError, match="already registered"):
        register_agent("nac", agent_wiring("nac"), "again")
    register_agent("nac", agent_wiring("lstm"), "the lstm under another name", replace=True)
    assert agent_wiring("nac") == agent_wiring("lstm")


def test_an_unregistered_part_is_named_with_the_registered_ones() -> None:
    space = gymnasium.spaces.Box(0.0, 1.0, (3,))
    with pytest.raises(ValueError, match="unknown core 'leaky'; registered cores: lstm, gru"):
        make_agent("lstm", space, 2, memory_core="leaky")
    with pytest.raises(ValueError, match="unknown encoder 'resnet'"):
        make_agent("lstm", space, 2, encoder="resnet")


@pytest.mark.usefixtures("clean_registries")
def test_a_registered_encoder_is_built_for_each_observation_entry() -> None:
    class Doubler(torch.nn.Module):
        def __init__(self, space: gymnasium.spaces.Box, feature_size: int) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(space.shape[0], feature_size)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return 2 * self.linear(x)

    register_encoder("doubler", Doubler)
    space = gymnasium.spaces.Dict(
        {"a": gymnasium.spaces.Box(0, 1, (3,)), "b": gymnasium.spaces.Box(0, 1, (4,))}
    )
    model = make_agent("lstm", space, 2, encoder="doubler", feature_size=8)
    assert isinstance(model.encoder.encoders["a"], Doubler) and isinstance(
        model.encoder.encoders["b"], Doubler
    )
    observation = {"a": torch.zeros(3, 2, 3), "b": torch.ones(3, 2, 4)}
    logits, value, _ = model(observation, torch.zeros(3, 2, dtype=torch.bool), model.initial_state(2))
    assert logits.shape == (3, 2, 2) and value.shape == (3, 2)


def test_a_box_observation_without_a_stimulus_feeds_every_wiring() -> None:
    space = gymnasium.spaces.Box(-1.0, 1.0, (4,))
    for name in ("lstm", "nac", "signed-count", "nac-ff"):
        model = make_agent(name, space, 2)
        logits, _, _ = model(
            {"observation": torch.zeros(5, 3, 4)}, torch.zeros(5, 3, dtype=torch.bool), model.initial_state(3)
        )
        assert logits.shape == (5, 3, 2), name


def test_a_checkpoint_written_before_the_registry_fields_loads_with_their_defaults() -> None:
    stored = agent_wiring("nac").to_dict()
    del stored["memory_core"], stored["encoder"]
    assert Wiring.from_dict(stored) == agent_wiring("nac")


@pytest.mark.slow
def test_the_custom_core_example_trains_and_evaluates_from_outside_the_checkout(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "custom_core.py")
    run = tmp_path / "run"
    trained = run_command(
        "nalu_rl.train",
        [
            "--import",
            "custom_core",
            "--agent",
            "leaky",
            *TINY,
            "--total-steps",
            "2000",
            "--eval-episodes",
            "0",
            "--logdir",
            str(run),
        ],
        tmp_path,
    )
    assert trained.returncode == 0, trained.stderr
    checkpoint = load_checkpoint(run)
    assert checkpoint["config"]["imports"] == ["custom_core"] and checkpoint["wiring"]["counter"] == "leaky"
    # A fresh process, no --import: the checkpoint names its module, which is not imported unasked.
    refused = run_command(
        "nalu_rl.evaluate",
        ["--checkpoint", str(run), "--delays", "5", "--out", str(tmp_path / "no")],
        tmp_path,
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "--import custom_core" in refused.stderr and "--trust-imports" in refused.stderr
    evaluated = run_command(
        "nalu_rl.evaluate",
        [
            "--checkpoint",
            str(run),
            "--import",
            "custom_core",
            "--delays",
            "5-12",
            "--episodes",
            "4",
            "--out",
            str(tmp_path / "eval"),
        ],
        tmp_path,
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert (tmp_path / "eval" / "success_by_delay.csv").read_text().count("\n") == 9
    # Where the module cannot be imported, one line names it.
    elsewhere = run_command(
        "nalu_rl.evaluate",
        ["--checkpoint", str(run), "--trust-imports", "--delays", "5"],
        REPOSITORY / "docs",
    )
    assert elsewhere.returncode == 2
    assert elsewhere.stderr.count("\n") == 1 and "cannot import module 'custom_core'" in elsewhere.stderr


def test_a_cores_bare_parameter_is_trained_saved_moved_and_loaded_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example's leaky integrator keeps its decay in a bare nn.Parameter, outside any layer.
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    run = tmp_path / "run"
    train.run_training(
        ["--import", "custom_core", "--agent", "leaky", *TINY, "--total-steps", "400", "--logdir", str(run)]
    )
    saved = load_checkpoint(run)["model"]["cores.count.decay_logit"]
    assert not torch.equal(saved, torch.full_like(saved, 3.0))  # moved from its initial value by the updates
    model, config = load_agent(run)
    assert config["imports"] == ["custom_core"] and model.state_names == ("lstm_h", "lstm_c", "leaky")
    assert torch.equal(model.cores["count"].decay_logit, saved)
    assert model.double().cores["count"].decay_logit.dtype == torch.float64  # .to() reaches it


@pytest.mark.usefixtures("clean_registries")
def test_a_cores_parts_cannot_shadow_the_models_own_or_another_cores() -> None:
    class Shadowing(Core):
        """A counter whose layers are named like the model's heads and encoder."""

        def __init__(self, inputs, input_widths, size, wiring) -> None:
            super().__init__(inputs, ("shadow",), size)
            self.actor = torch.nn.Linear(sum(input_widths[name] for name in inputs), size)
            self.encoder = torch.nn.Linear(1, 1)

        def step(self, prepared, signals, state, keep):
            m = state[0] * keep + self.actor(torch.cat([signals[name] for name in self.inputs], -1))
            return m, (m,)

    register_core("shadowing", Shadowing)
    model = make_agent("nac", gymnasium.spaces.Box(0.0, 1.0, (3,)), 2, counter="shadowing")
    assert model.actor is not model.cores["count"].actor and model.encoder is not model.cores["count"].encoder
    keys = model.state_dict().keys()
    assert {"actor.0.weight", "cores.count.actor.weight", "cores.count.encoder.weight"} <= set(keys)


def test_old_checkpoints_load_with_the_cores_layers_at_the_top_and_the_lstm_names() -> None:
    old_format = 0
    for name in checkpoint_module.shipped_checkpoint_names():
        payload = load_checkpoint(checkpoint_module.shipped_checkpoint(name))
        model, _ = load_agent(checkpoint_module.shipped_checkpoint(name))
        state = model.state_dict()
        assert state.keys() == checkpoint_module.upgrade_model_state(model, payload["model"]).keys()
        if "lstm_inputs" not in payload["wiring"]:  # shipped after the memory names
            assert "cores.memory.lstm_hidden.weight" in payload["model"], name
            continue
        old_format += 1
        assert torch.equal(state["cores.memory.lstm_hidden.weight"], payload["model"]["lstm_hidden.weight"])
        assert model.wiring.memory_inputs == tuple(payload["wiring"]["lstm_inputs"]), name
    assert old_format >= 1  # what this test is about: the older shipped checkpoints


def test_a_stored_wiring_with_the_lstm_names_reads_as_the_memory_names() -> None:
    stored = agent_wiring("nac-paper").to_dict()
    stored["lstm_inputs"], stored["lstm_size"] = stored.pop("memory_inputs"), stored.pop("memory_size")
    for field in ("counter_inputs", "actor_inputs", "critic_inputs"):
        stored[field] = ["lstm" if signal == "memory" else signal for signal in stored[field]]
    assert Wiring.from_dict(stored) == agent_wiring("nac-paper")
    with pytest.raises(ValueError, match="both an old and a new name"):
        Wiring.from_dict({**stored, "memory_size": 64})


def test_the_shipped_learned_count_checkpoints_recording_event_count_load_the_event_counter() -> None:
    for name in ("learned-count", "learned-count-interval"):
        payload = load_checkpoint(checkpoint_module.shipped_checkpoint(name))
        assert payload["wiring"]["counter"] == "event-count"  # its name when they were written
        model, _ = load_agent(checkpoint_module.shipped_checkpoint(name))
        assert model.wiring == agent_wiring("learned-count")
        assert model.wiring.counter == "event-counter"


def test_cartpole_trains_through_env_id_and_writes_its_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "cartpole"
    finished = train.run_training(
        ["--env-id", "CartPole-v1", "--agent", "lstm", *TINY, "--total-steps", "600", "--logdir", str(run)]
    )
    assert finished.steps >= 600 and finished.window.mean_ceiling is None
    assert (run / "checkpoint.pt").is_file() and list(run.glob("events.out.tfevents.*"))
    assert finished.window.episodes_seen > 0  # CartPole's episodes end and are counted
    model, config = load_agent(run)
    assert config["env_id"] == "CartPole-v1" and model.num_actions == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--import", "no_such_module_here"], "cannot import module 'no_such_module_here'"),
        (["--env-id", "NoSuchEnv-v0"], "unknown --env-id 'NoSuchEnv-v0'"),
        (["--env-id", "Pendulum-v1"], "Discrete actions only"),
        (["--env-kwargs", "[1, 2]"], "JSON object"),
    ],
)
def test_bad_plugin_input_is_one_line_exit_2(argv: list[str], message: str, tmp_path: Path) -> None:
    result = run_command("nalu_rl.train", [*argv, *TINY, "--total-steps", "100"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error:")
    assert message in result.stderr


def test_an_agent_naming_an_unregistered_unit_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "typo_unit.py").write_text(
        "from dataclasses import replace\n"
        "from nalu_rl.agents import agent_wiring, register_agent\n"
        "register_agent('typo', replace(agent_wiring('nac'), unit='nacc'), 'nac with a misspelt unit')\n"
    )
    argv = ["--import", "typo_unit", "--agent", "typo", *TINY, "--total-steps", "100"]
    result = run_command("nalu_rl.train", argv, tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "agent 'typo': unknown arithmetic unit 'nacc'; registered arithmetic units: nac" in result.stderr


@pytest.mark.usefixtures("clean_registries")
def test_the_unit_example_is_a_real_npu_that_the_accumulator_builds_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.delitem(sys.modules, "custom_unit", raising=False)
    custom_unit = importlib.import_module("custom_unit")
    monkeypatch.setitem(sys.modules, "custom_unit", custom_unit)  # forgotten after the test
    npu = custom_unit.RealNPU(2, 1)
    with torch.no_grad():
        npu.W.copy_(torch.tensor([[1.0, 1.0]]))
        npu.gate.fill_(1.0)
    x = torch.tensor([[3.0, 4.0], [-3.0, 4.0], [-3.0, -4.0], [0.5, 6.0]])
    torch.testing.assert_close(npu(x), (x[:, 0] * x[:, 1]).unsqueeze(-1), rtol=1e-4, atol=1e-4)
    model = make_agent("npu", gymnasium.spaces.Box(0.0, 1.0, (3,)), 2)
    assert isinstance(model.cores["count"].counter_unit, custom_unit.RealNPU)
    observation = {"observation": torch.rand(4, 2, 3)}
    logits, _, _ = model(observation, torch.zeros(4, 2, dtype=torch.bool), model.initial_state(2))
    assert torch.isfinite(logits).all()
    assert any(parameter is model.cores["count"].counter_unit.gate for parameter in model.parameters())


def test_a_user_module_registers_an_environment_and_an_agent_for_one_run(tmp_path: Path) -> None:
    (tmp_path / "my_lab.py").write_text(
        textwrap.dedent(
            """
            from dataclasses import replace
            import gymnasium
            from nalu_rl.agents import agent_wiring, register_agent

            gymnasium.register(id="my_lab/Chain-v0", entry_point="gymnasium.envs.toy_text:FrozenLakeEnv",
                               kwargs={"is_slippery": False})
            register_agent("tiny-lstm", replace(agent_wiring("lstm"), memory_size=8), "An 8-unit LSTM.")
            """
        )
    )
    result = run_command(
        "nalu_rl.train",
        [
            "--import",
            "my_lab",
            "--env-id",
            "my_lab/Chain-v0",
            "--agent",
            "tiny-lstm",
            *TINY,
            "--total-steps",
            "400",
            "--logdir",
            str(tmp_path / "run"),
        ],
        tmp_path,
    )
    # FrozenLake observes a Discrete cell number, which the agent reads one-hot: the run trains.
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "checkpoint.pt").is_file()


def test_the_updown_example_counts_the_time_left_of_interval_timing_with_unit_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With its unit's weights at [+1, -1] the example's count is 2T - t - 1 after the light, exactly."""
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    import updown_count  # noqa: F401  (registers the core and the agent)

    env = gymnasium.make("nalu_rl/IntervalTiming-v0", obs_mode="symbolic")
    model = make_agent("updown-count", env.observation_space)
    with torch.no_grad():
        model.cores["count"].counter_unit.W.copy_(torch.tensor([[1.0, -1.0]]))
    delay = 7
    lights = torch.tensor([1.0] * delay + [0.0] * (2 * delay + 3)).view(-1, 1, 1)
    state = model.initial_state(1)
    counts = []
    for light in lights:
        observation = {"grid": torch.zeros(1, 1, 2, 5, 5, dtype=torch.uint8), "stimulus": light.view(1, 1, 1)}
        _, _, state = model(observation, torch.tensor([[len(counts) == 0]]), state)
        counts.append(model.describe_state(state)["signed-nau"].item())
    assert counts[:delay] == list(range(1, delay + 1))  # up while the light is on
    after = range(delay, len(counts))
    assert [counts[t] for t in after] == [2 * delay - t - 1 for t in after]  # down after, to below 0
