"""`--precision`: auto picks bf16 only on a CPU with native bfloat16 (fp32 on CUDA, where it was
measured slower), and the count stays exact in bf16."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from nalu_rl import precision, train
from nalu_rl.agents import make_agent
from nalu_rl.cli import run_cli
from nalu_rl.envs import TimeTrackEnv

REPOSITORY = Path(__file__).resolve().parent.parent
# Tests marked `cuda` need a CUDA device (scripts/device_check.sh runs `pytest -m cuda`); skipped without one.


def count_after_steps(
    model: torch.nn.Module, precision_name: str, stimulus: float, steps: int
) -> torch.Tensor:
    """The counter state of `model` after `steps` steps of one episode whose onset shows `stimulus`,
    played in unrolls of 20 as the learner sees them, under `precision_name`, on the model's device."""
    space = TimeTrackEnv(obs_mode="symbolic").observation_space
    device = next(model.parameters()).device
    state = model.initial_state(2)
    unroll = 20
    with torch.no_grad():
        for start in range(0, steps, unroll):
            grid = torch.zeros(unroll, 2, *space["grid"].shape, dtype=torch.uint8, device=device)
            stimuli = torch.zeros(unroll, 2, 1, device=device)
            episode_start = torch.zeros(unroll, 2, dtype=torch.bool, device=device)
            if start == 0:
                stimuli[0] = stimulus
                episode_start[0] = True
            with precision.autocast(precision_name, device):
                _, _, state = model({"grid": grid, "stimulus": stimuli}, episode_start, state)
    for part in state:
        assert part.dtype == torch.float32  # the state carried between unrolls stays float32
    return model.describe_state(state)[model.wiring.unit]


# With an LSTM beside the counter, 1000 steps of bfloat16 emulated on a CPU without it take ~20 s.
@pytest.mark.parametrize(
    "agent",
    [
        pytest.param("nac", marks=pytest.mark.slow),
        pytest.param("nau-scalar-count", marks=pytest.mark.slow),
        "nac-recurrent-ff",
    ],
)
def test_bf16_count_after_1000_steps_equals_the_float32_count_exactly(agent: str) -> None:
    torch.manual_seed(0)
    # A small LSTM and encoder keep emulated bfloat16 fast; the counter reads only stimulus and bias.
    space = TimeTrackEnv(obs_mode="symbolic").observation_space
    model = make_agent(agent, space, memory_size=16, feature_size=16).eval()
    # 1001 is not a bfloat16 number (bf16 holds integers exactly only up to 256).
    float32_count = count_after_steps(model, "fp32", 1001.0, 1000)
    bf16_count = count_after_steps(model, "bf16", 1001.0, 1000)
    assert torch.equal(bf16_count, float32_count)


@pytest.mark.parametrize("agent", ["nac", "nau-scalar-count"])
@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_bf16_count_on_cuda_equals_the_float32_count_exactly(agent: str) -> None:
    torch.manual_seed(0)
    model = make_agent(agent, TimeTrackEnv(obs_mode="symbolic").observation_space).eval().cuda()
    float32_count = count_after_steps(model, "fp32", 1001.0, 1000)
    bf16_count = count_after_steps(model, "bf16", 1001.0, 1000)
    assert torch.equal(bf16_count, float32_count)


def test_auto_picks_fp32_on_cuda_where_bf16_was_measured_slower() -> None:
    # Resolving needs no device: the rule is the H200 measurement (docs/PERFORMANCE.md, "The GPU check").
    resolved, reason = precision.resolve_precision("auto", "cuda")
    assert resolved == "fp32" and "0.56x" in reason
    assert precision.resolve_precision("bf16", "cuda")[0] == "bf16"


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_bf16_learner_update_on_cuda_is_finite_and_keeps_float32_weights() -> None:
    from nalu_rl.config import Config
    from nalu_rl.runtime.actor import Actor
    from nalu_rl.runtime.rollout import RolloutBuffers
    from nalu_rl.runtime.update import Learner

    config = Config(agent="nac", obs="pixels", envs_per_actor=16, unroll_length=20, precision="bf16")
    space = TimeTrackEnv(**config.env_kwargs()).observation_space
    acting = make_agent("nac", space).eval()
    buffers = RolloutBuffers(space, acting.initial_state(16), 20, 16, 1, shared=False)
    Actor(config, acting, 16, seed=0).unroll(buffers.slot(0))
    model = make_agent("nac", space).cuda()
    learner = Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), config)
    metrics = learner.update(buffers.batch([0], pin_memory=True).to("cuda"))
    assert metrics is not None and torch.isfinite(torch.tensor(metrics["loss/total"]))
    assert all(value.dtype == torch.float32 for value in model.state_dict().values())


@pytest.mark.slow
def test_bf16_exact_count_ends_at_the_time_left() -> None:
    space = TimeTrackEnv(obs_mode="symbolic").observation_space
    model = make_agent("nau-scalar-count", space, memory_size=16, feature_size=16).eval()
    with torch.no_grad():
        # m_t = T - (t + 1): the time left
        model.cores["count"].counter_unit.W.copy_(torch.tensor([[1.0, -1.0]]))
    count = count_after_steps(model, "bf16", 1001.0, 1000)
    assert count.flatten().tolist() == [1.0, 1.0]


def test_bf16_model_runs_its_layers_in_bf16_and_returns_float32() -> None:
    # The speed of bf16 comes from the layers; the outputs the loss reads are cast back by the learner.
    model = make_agent("nac", TimeTrackEnv(obs_mode="symbolic").observation_space)
    grid = torch.zeros(3, 2, 2, 5, 5, dtype=torch.uint8)
    with precision.autocast("bf16", "cpu"):
        logits, _, state = model(
            {"grid": grid, "stimulus": torch.zeros(3, 2, 1)}, torch.ones(3, 2, dtype=torch.bool),
            model.initial_state(2),
        )  # fmt: skip
    assert logits.dtype == torch.bfloat16
    assert all(part.dtype == torch.float32 for part in state)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (frozenset({"sse4_2", "avx2", "avx512f"}), "fp32"),
        (frozenset({"avx512f", "avx512_bf16"}), "bf16"),
        (frozenset({"amx_tile", "amx_bf16"}), "bf16"),
    ],
)
def test_auto_resolves_to_bf16_only_on_a_cpu_with_native_bf16(monkeypatch, flags, expected) -> None:
    monkeypatch.setattr(precision, "cpu_flags", lambda: flags)
    resolved, reason = precision.resolve_precision("auto", "cpu")
    assert resolved == expected
    assert reason.startswith("auto:")
    assert precision.resolve_precision("fp32", "cpu")[0] == "fp32"
    assert precision.resolve_precision("bf16", "cpu")[0] == "bf16"


def test_cpu_flags_are_read_from_cpuinfo(monkeypatch, tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse avx512_bf16 amx_bf16\nbugs\t\t: spectre_v1\n")
    monkeypatch.setattr(precision, "CPUINFO_PATH", cpuinfo)
    precision.cpu_flags.cache_clear()
    try:
        assert {"avx512_bf16", "amx_bf16", "fpu"} <= precision.cpu_flags()
        assert "spectre_v1" not in precision.cpu_flags()
    finally:
        precision.cpu_flags.cache_clear()


def test_training_in_bf16_runs_and_stores_the_precision_in_config_json(tmp_path: Path) -> None:
    run = train.run_training(
        ["--agent", "nac", "--obs", "symbolic", "--actors", "0", "--precision", "bf16"]
        + ["--total-steps", "3000", "--envs-per-actor", "32", "--batch-unrolls", "1", "--eval-episodes", "0"]
        + ["--no-progress", "--logdir", str(tmp_path)]
    )
    assert run.steps >= 3000 and run.updates >= 4 and run.counters.bad_updates == 0
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["precision"] == "bf16"
    assert saved["resolved_precision"] == "bf16"
    assert all(value.dtype == torch.float32 for value in run.model.state_dict().values())


def test_unknown_precision_is_a_one_line_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(train.main, ["--precision", "fp16"])
    stderr = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("error:") and "--precision" in stderr


def test_device_check_dry_run_names_the_bench_commands() -> None:
    result = subprocess.run(
        ["bash", str(REPOSITORY / "scripts" / "device_check.sh"), "--dry-run"],
        capture_output=True, text=True, cwd=REPOSITORY, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = result.stdout
    assert "pip install" in plan and "pytest" in plan and "-m cuda" in plan
    assert "nalu_rl/envs" in plan or "envs/ and agents/ inside nalu_rl/" in plan  # the installed layout
    bench_lines = [line for line in plan.splitlines() if "scripts/bench_train.py" in line]
    learner_lines = [line for line in bench_lines if "--compare" in line]
    device_lines = [line for line in bench_lines if "--device-batches" in line]
    assert len(learner_lines) == len(device_lines) == 1 and len(bench_lines) == 2, plan
    for expected in ("--device cuda", "--actors 16", "--modes pixels", "--precisions fp32 bf16"):
        assert expected in learner_lines[0], expected
    # The device runtime: nac, both observation modes, the envs grown over several batch sizes.
    for expected in ("--device cuda", "--agent nac", "--modes symbolic pixels"):
        assert expected in device_lines[0], expected
    assert len(device_lines[0].split("--device-batches")[1].split("--")[0].split()) >= 3
    assert "tests/test_device_env.py" in plan and "tests/test_device_runtime.py" in plan
    assert "timeout" in plan


def test_the_start_line_names_the_actors_precision_only_where_they_act_on_the_cpu_apart() -> None:
    from nalu_rl.precision import describe_choice

    assert describe_choice("fp32", "cpu") == "precision: fp32 (--precision fp32)"
    apart = describe_choice("fp32", "cuda")
    assert apart.endswith("; actors on the CPU: fp32 (--precision fp32)")
    assert describe_choice("fp32", "cuda", actors_on_the_cpu=False) == "precision: fp32 (--precision fp32)"
