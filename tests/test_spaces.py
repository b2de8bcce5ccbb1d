"""Observation spaces as Stable-Baselines3 users expect them, MultiDiscrete actions, and their refusals.

The tiny envs the trainings use are registered here: a one-step cue task whose observation is a Tuple
of Discrete, MultiDiscrete and MultiBinary leaves, a task with MultiDiscrete actions, and an env with
a Text entry.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from conftest import cli_exit_code
from gymnasium import spaces

from nalu_rl import train
from nalu_rl.agents import ActorCritic, agent_wiring, distributions, make_agent
from nalu_rl.agents.encoders import (
    MAX_CODES,
    MIN_CONV_SIDE,
    CodeEmbeddingEncoder,
    MLPEncoder,
    PixelEncoder,
    auto_encoder_name,
)
from nalu_rl.agents.losses import actor_critic_loss
from nalu_rl.agents.observations import leaf_transform
from nalu_rl.checkpoint import load_agent, load_checkpoint
from nalu_rl.errors import CheckpointError, InputError
from nalu_rl.runtime.rollout import RolloutBuffers
from nalu_rl.spaces import action_components, leaf_space, observation_dict, observation_leaves


class TupleCueEnv(gymnasium.Env):
    """One step: the observation's Discrete cue (leaf "0") says which of `cues` actions pays 1; the
    other leaves (a MultiDiscrete and a MultiBinary) are noise."""

    def __init__(self, cues: int = 3) -> None:
        noise = spaces.Tuple((spaces.MultiDiscrete([2, 3]), spaces.MultiBinary(2)))
        self.observation_space = spaces.Tuple((spaces.Discrete(cues, start=1), noise))
        self.action_space = spaces.Discrete(cues)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.cue = int(self.np_random.integers(self.action_space.n))
        noise = (self.np_random.integers(0, [2, 3]), self.np_random.integers(0, 2, 2).astype(np.int8))
        return (self.cue + 1, noise), {}

    def step(self, action):
        success = int(action) == self.cue
        return self.reset()[0], float(success), True, False, {"success": success}


class MultiActionEnv(gymnasium.Env):
    """One step: the MultiBinary observation's two bits are the cue; the MultiDiscrete action (3, 2)
    pays 1 when its first component equals the bits read as a number in 0..2 (3 reads as 2) and
    its second the first bit."""

    observation_space = spaces.MultiBinary(2)
    action_space = spaces.MultiDiscrete([3, 2])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.bits = self.np_random.integers(0, 2, 2).astype(np.int8)
        return self.bits, {}

    def step(self, action):
        target = (min(2, int(self.bits[0]) * 2 + int(self.bits[1])), int(self.bits[0]))
        success = tuple(int(a) for a in action) == target
        return self.reset()[0], float(success), True, False, {"success": success}


class CodeCueEnv(gymnasium.Env):
    """One step: a 2x2 grid of integer codes, two channels a cell (MiniGrid's kind of view); the code
    0..5 in the first channel of cell (0, 0) says which of 3 actions pays 1 (the code modulo 3, so
    that no ordering of the codes reads it), every other entry is noise."""

    observation_space = spaces.Box(0, 5, (2, 2, 2), np.int64)
    action_space = spaces.Discrete(3)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.codes = self.np_random.integers(0, 6, (2, 2, 2))
        return self.codes, {}

    def step(self, action):
        success = int(action) == int(self.codes[0, 0, 0]) % 3
        return self.reset()[0], float(success), True, False, {"success": success}


class TextEntryEnv(gymnasium.Env):
    observation_space = spaces.Dict({"position": spaces.Discrete(4), "mission": spaces.Text(20)})
    action_space = spaces.Discrete(2)


gymnasium.register(id="spaces_test/TupleCue-v0", entry_point=TupleCueEnv)
gymnasium.register(id="spaces_test/MultiAction-v0", entry_point=MultiActionEnv)
gymnasium.register(id="spaces_test/TextEntry-v0", entry_point=TextEntryEnv)
gymnasium.register(id="spaces_test/CodeCue-v0", entry_point=CodeCueEnv)

SERIAL = ["--actors", "0", "--envs-per-actor", "16", "--unroll-length", "5", "--no-progress"]
SERIAL += ["--eval-episodes", "0", "--log-interval-s", "1", "--learning-rate", "3e-3"]


def test_nested_observations_become_leaves_named_by_their_path() -> None:
    inner = spaces.Tuple((spaces.Discrete(2), spaces.Dict({"b": spaces.Box(0, 1, (2,))})))
    space = spaces.Dict({"a": inner, "c": spaces.MultiBinary(3)})
    assert list(observation_leaves(space)) == ["a.0", "a.1.b", "c"]
    assert list(observation_dict(space.sample())) == ["a.0", "a.1.b", "c"]
    assert list(observation_leaves(spaces.Discrete(4))) == ["observation"]
    # A Dict of leaves (the timing tasks' observation) is kept as it is.
    flat = spaces.Dict({"grid": spaces.Box(0, 1, (2, 3, 3), np.uint8), "stimulus": spaces.Box(0, 1, (1,))})
    assert leaf_space(flat) is flat


def test_a_vector_envs_nested_observation_flattens_to_batched_leaves() -> None:
    envs = gymnasium.make_vec("spaces_test/TupleCue-v0", num_envs=4)
    leaves = observation_dict(envs.reset(seed=0)[0])
    assert {key: value.shape for key, value in leaves.items()} == {"0": (4,), "1.0": (4, 2), "1.1": (4, 2)}
    assert list(leaves) == list(observation_leaves(envs.single_observation_space))


def test_leaves_are_transformed_as_stable_baselines3_does() -> None:
    discrete = leaf_transform(spaces.Discrete(3, start=1))
    assert discrete(torch.tensor([2, 3])).tolist() == [[0, 1, 0], [0, 0, 1]]
    multi = leaf_transform(spaces.MultiDiscrete([2, 3]))
    assert multi(torch.tensor([[1, 2]])).tolist() == [[0, 1, 0, 0, 1]]
    assert multi.output_space.shape == (5,)
    binary = leaf_transform(spaces.MultiBinary(2))
    assert binary(torch.tensor([[1, 0]], dtype=torch.int8)).dtype == torch.float32
    box = spaces.Box(0, 255, (7, 7, 3), np.uint8)
    assert leaf_transform(box).output_space is box


def test_auto_reads_images_with_the_conv_net_integer_codes_with_embeddings_the_rest_with_the_mlp() -> None:
    minigrid_view = spaces.Box(0, 255, (7, 7, 3), np.uint8)  # too small for the conv net: codes
    assert auto_encoder_name(minigrid_view) == "embedding"
    assert auto_encoder_name(spaces.Box(0, 255, (MIN_CONV_SIDE, MIN_CONV_SIDE, 3), np.uint8)) == "conv"
    assert auto_encoder_name(spaces.Box(-1, 5, (4,), np.int32)) == "embedding"
    assert auto_encoder_name(spaces.Box(0, 1, (2, 5, 5), np.uint8)) == "mlp"  # 0/1 planes (TimeTrack's)
    assert auto_encoder_name(spaces.Box(0, MAX_CODES, (3,), np.int64)) == "mlp"  # one value too many
    assert auto_encoder_name(spaces.Box(0, np.iinfo(np.int64).max, (3,), np.int64)) == "mlp"
    assert auto_encoder_name(spaces.Box(0.0, 5.0, (3,), np.float32)) == "mlp"
    PixelEncoder((MIN_CONV_SIDE, MIN_CONV_SIDE, 3))  # the smallest image the conv net reads
    with pytest.raises(ValueError, match="at least 20x20"):
        PixelEncoder((7, 7, 3))


def test_the_embedding_encoder_gives_each_channels_codes_their_own_vectors() -> None:
    torch.manual_seed(0)
    encoder = CodeEmbeddingEncoder(spaces.Box(np.array([0, -2]), np.array([5, 3]), (2,), np.int64), 16)
    assert encoder.embedding.num_embeddings == 6 + 6
    codes = torch.tensor([[[2, 2], [3, 2]]])  # [1, 2, 2]: leading axes kept
    assert encoder(codes).shape == (1, 2, 16)
    encoder(codes[:, :1]).sum().backward()
    # Code 2 of the first channel and code 2 of the second (its fifth value) are different rows.
    assert encoder.embedding.weight.grad.abs().sum(1).nonzero().flatten().tolist() == [2, 6 + 4]
    # A code beyond the bounds reads as the nearest bound.
    with torch.no_grad():
        assert torch.equal(encoder(torch.tensor([9, -7])), encoder(torch.tensor([5, -2])))
        assert not torch.equal(encoder(torch.tensor([4, -2])), encoder(torch.tensor([5, -2])))
    with pytest.raises(ValueError, match="integer Box entries of 3 to 256 values"):
        CodeEmbeddingEncoder(spaces.Box(0.0, 1.0, (2,)), 16)


def test_a_checkpoint_that_records_the_mlp_for_a_code_entry_loads_with_the_mlp() -> None:
    space = spaces.Dict({"image": spaces.Box(0, 255, (7, 7, 3), np.uint8)})
    assert isinstance(ActorCritic(space, 3, agent_wiring("lstm")).encoder, CodeEmbeddingEncoder)
    # Runs from before the embedding encoder recorded "mlp" for MiniGrid's view; they load as trained.
    older = ActorCritic(space, 3, agent_wiring("lstm"), leaf_encoders={"image": "mlp"})
    assert isinstance(older.encoder, MLPEncoder)


def test_a_model_reads_a_nested_observation_and_records_each_leafs_preprocessing() -> None:
    space = gymnasium.make("spaces_test/TupleCue-v0").observation_space
    model = make_agent("lstm", space, num_actions=(3, 2))
    record = model.observation_preprocessing
    assert {key: (entry["transform"], entry["encoder"]) for key, entry in record.items()} == {
        "0": ("one_hot", "mlp"),
        "1.0": ("one_hots", "mlp"),
        "1.1": ("float", "mlp"),
    }
    # A nested entry's encoder is named with "/" for "." (torch module names hold no ".").
    assert any(name.startswith("encoder.encoders.1/0.") for name in model.state_dict())
    observation = {"0": torch.tensor([[1, 3]]), "1.0": torch.tensor([[[0, 2], [1, 1]]])}
    observation["1.1"] = torch.tensor([[[1, 0], [0, 0]]], dtype=torch.int8)
    logits, value, _ = model(observation, torch.ones(1, 2, dtype=torch.bool), model.initial_state(2))
    assert logits.shape == (1, 2, 5) and value.shape == (1, 2)


def test_rollout_buffers_hold_integer_leaves_as_integers() -> None:
    space = leaf_space(gymnasium.make("spaces_test/TupleCue-v0").observation_space)
    buffers = RolloutBuffers(space, (), 4, 2, 1, shared=False, action_shape=(2,))
    assert buffers.tensors["obs.0"].dtype == torch.int64
    assert buffers.tensors["obs.1.0"].shape == (1, 5, 2, 2)
    assert buffers.tensors["actions"].shape == (1, 4, 2, 2)


def test_multidiscrete_log_probabilities_and_entropies_are_sums_over_components() -> None:
    torch.manual_seed(0)
    logits = torch.randn(4, 6, 5)
    actions = torch.stack([torch.randint(0, 3, (4, 6)), torch.randint(0, 2, (4, 6))], -1)
    first = torch.distributions.Categorical(logits=logits[..., :3])
    second = torch.distributions.Categorical(logits=logits[..., 3:])
    expected = first.log_prob(actions[..., 0]) + second.log_prob(actions[..., 1])
    torch.testing.assert_close(distributions.log_prob(logits, actions, (3, 2)), expected)
    torch.testing.assert_close(distributions.entropy(logits, (3, 2)), first.entropy() + second.entropy())
    assert distributions.sample(logits[0], (3, 2)).shape == (6, 2)
    assert distributions.greedy(logits, (3, 2)).shape == (4, 6, 2)
    # The A3C loss's entropy term is the summed entropy.
    terms = actor_critic_loss(logits, actions, torch.zeros(4, 6), torch.zeros(4, 6), torch.zeros(4, 6),
                              torch.ones(4, 6), action_sizes=(3, 2))  # fmt: skip
    torch.testing.assert_close(terms.entropy, (first.entropy() + second.entropy()).mean())


def test_discrete_actions_keep_one_categorical() -> None:
    logits, actions = torch.randn(3, 4, 5), torch.randint(0, 5, (3, 4))
    expected = torch.log_softmax(logits, -1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(distributions.log_prob(logits, actions, 5), expected)


def test_action_indices_become_the_envs_actions_from_its_start() -> None:
    components = action_components(spaces.MultiDiscrete([3, 2], start=[1, -1]))
    assert components.action_sizes == (3, 2)
    assert components.to_env(np.array([[0, 1]])).tolist() == [[1, 0]]
    assert action_components(spaces.Discrete(4, start=2)).to_env(np.array([0, 3])).tolist() == [2, 5]
    with pytest.raises(InputError, match="Discrete and MultiDiscrete actions only"):
        action_components(spaces.Box(-1, 1, (2,)))


def test_a_text_observation_entry_is_refused_in_one_line_naming_it(capsys: pytest.CaptureFixture) -> None:
    argv = ["--env-id", "spaces_test/TextEntry-v0", "--total-steps", "100", *SERIAL]
    assert cli_exit_code(train.main, argv) == 2
    stderr = capsys.readouterr().err
    assert stderr.count("\n") == 1 and stderr.startswith("error:")
    assert "'mission' is a Text space" in stderr and "--import" in stderr and "EXTENDING" in stderr


@pytest.mark.slow
def test_a_tuple_observation_env_trains_and_its_checkpoint_refuses_changed_spaces(tmp_path: Path) -> None:
    run = train.run_training(
        [
            "--env-id",
            "spaces_test/TupleCue-v0",
            "--agent",
            "lstm",
            "--total-steps",
            "6000",
            *SERIAL,
            "--success-window",
            "200",
            "--logdir",
            str(tmp_path),
        ]  # fmt: skip
    )
    # Chance is 1/3: reading the one-hot cue is what lifts success (to 0.79 on an Intel Xeon with
    # AMX, above 0.8 on an AMD EPYC: the same seeded run differs with the CPU's float kernels).
    assert run.window.success_rate() >= 0.7, run.window.success_rate()
    payload = load_checkpoint(tmp_path)
    cue = {"space": "Discrete(3, start=1)", "transform": "one_hot", "encoder": "mlp"}
    assert payload["observation"]["0"] == cue
    model, _ = load_agent(tmp_path)
    assert model.observation_preprocessing == payload["observation"]
    # The env's cue now has 4 values: the checkpoint says what it was trained on, in one line.
    with pytest.warns(UserWarning, match="Overriding environment"):
        gymnasium.register(id="spaces_test/TupleCue-v0", entry_point=TupleCueEnv, kwargs={"cues": 4})
    try:
        with pytest.raises(CheckpointError, match=r"was trained on observations \{0: Discrete\(3, start=1\)"):
            load_agent(tmp_path)
    finally:
        with pytest.warns(UserWarning, match="Overriding environment"):
            gymnasium.register(id="spaces_test/TupleCue-v0", entry_point=TupleCueEnv)


@pytest.mark.slow
def test_an_env_of_integer_codes_trains_with_the_auto_encoder_and_records_it(tmp_path: Path) -> None:
    run = train.run_training(
        ["--env-id", "spaces_test/CodeCue-v0", "--agent", "lstm", "--total-steps", "6000", *SERIAL]
        + ["--success-window", "200", "--logdir", str(tmp_path)]
    )
    # Chance is 1/3; the answer is the code modulo 3, which no ordering of the codes gives.
    assert run.window.success_rate() >= 0.9, run.window.success_rate()
    record = load_checkpoint(tmp_path)["observation"]["observation"]
    assert (record["transform"], record["encoder"]) == ("box", "embedding")
    assert isinstance(load_agent(tmp_path)[0].encoder, CodeEmbeddingEncoder)


@pytest.mark.slow
def test_a_multidiscrete_action_env_trains_with_one_categorical_per_component(tmp_path: Path) -> None:
    run = train.run_training(
        [
            "--env-id",
            "spaces_test/MultiAction-v0",
            "--agent",
            "lstm",
            # One gradient step per batch, so that the learner scores the very policy that acted.
            *["--algo", "a3c", "--value-targets", "vtrace", "--no-advantage-norm", "--no-return-norm"],
            *["--max-grad-norm", "40"],
            "--total-steps",
            "8000",
            *SERIAL,
            "--success-window",
            "200",
            "--logdir",
            str(tmp_path),
        ]  # fmt: skip
    )
    # The learner scores the stored actions as the actor did (summed component log-probabilities).
    assert run.last_metrics["loss/policy_log_ratio"] < 1e-5
    assert run.window.success_rate() >= 0.6, run.window.success_rate()  # chance is 1/6
    assert load_checkpoint(tmp_path)["action_sizes"] == (3, 2)


@pytest.mark.slow
def test_frozen_lake_trains_from_the_command_line(tmp_path: Path) -> None:
    """`python -m nalu_rl.train --env-id FrozenLake-v1` (a Discrete observation), on a small budget."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nalu_rl.train",
            "--env-id",
            "FrozenLake-v1",
            "--total-steps",
            "2000",
            "--envs-per-actor",
            "16",
            "--no-progress",
            "--logdir",
            str(tmp_path / "run"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "config.json").is_file() and (tmp_path / "run" / "checkpoint.pt").is_file()
    assert load_checkpoint(tmp_path / "run")["observation"]["observation"]["transform"] == "one_hot"


@pytest.mark.slow
def test_the_minigrid_example_wrapper_trains_the_memory_task(tmp_path: Path) -> None:
    """examples/minigrid_memory.py, as its docstring runs it (MiniGrid is an optional extra)."""
    pytest.importorskip("minigrid")
    examples = Path(__file__).resolve().parents[1] / "examples"
    argv = ["--import", "minigrid_memory", "--env-id", "minigrid_memory/MemoryS7-v0", "--agent", "lstm"]
    argv += ["--total-steps", "1000", "--envs-per-actor", "8", "--no-progress"]
    command = [sys.executable, "-m", "nalu_rl.train", *argv, "--logdir", str(tmp_path / "run")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=examples)
    assert result.returncode == 0, result.stderr
    record = load_checkpoint(tmp_path / "run")["observation"]
    transforms = {key: entry["transform"] for key, entry in record.items()}
    assert transforms == {"direction": "one_hot", "image": "box"}
    assert record["image"]["encoder"] == "embedding"  # MiniGrid's codes; 7x7 is too small for the conv net
