"""`Config`, every setting of a training run with its default and one-line help: the command line
(`parser.py`), config.json, the checkpoint and the TensorBoard hparams are all derived from it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nalu_rl.files import write_text_atomically
from nalu_rl.plugins import IMPORT_FLAG

if TYPE_CHECKING:
    from nalu_rl.environment import RunEnvironment


# The groups of options, in the order --help lists them, each with its title there; every field
# names its group (`_option`), and validation.py has one check per group.
OPTION_GROUPS = {
    "environment": "environment: which env, and a timing task's options",
    "agent": "agent: which one, and the modules that register yours",
    "learner": "learner: the update, its targets, losses, rates and regulariser",
    "runtime": "runtime: the processes, envs, rollout buffers, device and precision that feed the learner",
    "run": "run: seed, budgets, stopping, logs, checkpoints, final evaluation, run folder",
}


def _option(group: str, default: Any, help: str, **argparse_kwargs: Any) -> Any:
    """A dataclass field of the options `group` (a key of OPTION_GROUPS), carrying its one-line help
    (shown by --help) and extra argparse settings (`flag` names its option where that is not the
    field's name)."""
    if group not in OPTION_GROUPS:
        raise ValueError(f"unknown option group {group!r}")
    metadata = {"group": group, "help": help, **argparse_kwargs}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def option_names(group: str) -> tuple[str, ...]:
    """The Config fields of the options `group`, in their order."""
    return tuple(item.name for item in dataclasses.fields(Config) if item.metadata["group"] == group)


def _json_object(text: str) -> dict[str, Any]:
    from nalu_rl.environment import parse_env_kwargs

    try:
        return parse_env_kwargs(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


# The options that mean something on a timing task only (its task options, its stopping target and
# its success-vs-T evaluation); a run on another env leaves them out of config.json.
TIMING_TASK_FIELDS = (
    "obs",
    "size",
    "delay_range",
    "stimulus",
    "reward_mode",
    "target_fraction",
    "eval_max_delay",
)

# The agent trained on an env that is not a timing task when --agent is not given.
GENERIC_DEFAULT_AGENT = "lstm"


@dataclass
class Config:
    """Every setting of a training run, with its default (`parse_config` puts the agent's registered
    training defaults over these)."""

    agent: str = _option(
        "agent",
        "learned-count",
        "agent (core) to train (the default on an env that is not a timing task: lstm)",
    )
    separate_critic: str = _option(
        "agent",
        "auto",
        "on: the critic gets an encoder and a memory core of its own, as sb3-contrib's RecurrentPPO "
        "builds it, so the value loss never moves what the policy reads; off: the critic as the agent "
        "is wired; auto: on for an agent with a memory core whose critic reads no count",
        choices=("auto", "on", "off"),
    )
    env_id: str = _option(
        "environment",
        "nalu_rl/TimeTrack-v0",
        "Gymnasium id of the environment (Discrete or MultiDiscrete actions; observations of Box, "
        "Discrete, MultiDiscrete, MultiBinary, nested in Dict and Tuple; e.g. nalu_rl/IntervalTiming-v0, "
        "FrozenLake-v1, or one registered by an --import module)",
    )
    extra_env_kwargs: dict = _option(
        "environment",
        {},
        "keyword arguments of the environment, a JSON object (over the task options below)",
        flag="--env-kwargs",
        type=_json_object,
        metavar="JSON",
    )
    imports: list = _option(
        "agent",
        [],
        "a module of yours to import first, in the learner and every worker (repeatable); it may "
        "register cores, encoders, agents and environments; recorded in the run for evaluate/render",
        flag=IMPORT_FLAG,
        action="append",
        metavar="MODULE",
    )
    obs: str = _option(
        "environment",
        "pixels",
        "observation mode of a timing task (TimeTrack, IntervalTiming)",
        choices=("pixels", "symbolic"),
    )
    runtime: str = _option(
        "runtime",
        "learner",
        "learner: actor processes feed one learner; hogwild: workers update one shared model; device: "
        "the timing task as tensors, the policy and the learner in one process on --device, stepping "
        "--actors x --envs-per-actor envs as one batch",
        choices=("learner", "hogwild", "device"),
    )
    actors: int = _option(
        "runtime", 2, "actor (or hogwild worker) processes; 0 runs the learner runtime in one process"
    )
    envs_per_actor: int = _option(
        "runtime",
        32,
        "environments stepped together by each actor (device: times --actors; the project's agents on "
        "a timing task: 64)",
    )
    hogwild_envs: int = _option("runtime", 1, "environments per hogwild worker (the classic A3C uses 1)")
    unroll_length: int = _option("runtime", 20, "environment steps per rollout (n of the n-step returns)")
    batch_unrolls: int = _option("runtime", 2, "actor rollouts stacked into one learner batch")
    buffers_per_actor: int = _option(
        "runtime", 2, "shared rollout buffers per actor; bounds how far actors run ahead"
    )
    synchronous: bool = _option(
        "runtime",
        True,
        "actors wait for the newest weights before each unroll and a batch is one unroll per actor "
        "(policy lag 0, as in A2C; --batch-unrolls and --buffers-per-actor then do not apply); "
        "--no-synchronous lets actors run ahead of the learner, which LSTM policies do not survive",
    )
    device: str = _option(
        "runtime", "auto", "learner device (auto: cuda when available)", choices=("auto", "cpu", "cuda")
    )
    precision: str = _option(
        "runtime",
        "auto",
        "numeric precision of the learner and the actors' acting: bf16 runs the layers under bfloat16 "
        "autocast (the counter, its state, the loss and the weights stay float32); auto: bf16 where the "
        "device computes it natively (CUDA with bf16, a CPU with AMX or AVX-512 BF16), else fp32",
        choices=("auto", "fp32", "bf16"),
    )
    learner_threads: int = _option(
        "runtime",
        0,
        "torch threads of the learner (0: every core with synchronous actors, which wait while it "
        "learns; else the cores the actors leave, less one)",
    )
    total_steps: int = _option("run", 20_000_000, "budget of environment steps")
    time_budget_s: float = _option(
        "run", 0.0, "also stop after this many seconds of training in this process (0: no time limit)"
    )
    delay_range: tuple[int, int] = _option(
        "environment", (5, 12), "training delays T, LO HI inclusive", metavar=("LO", "HI")
    )
    size: int = _option("environment", 5, "side of the square grid")
    stimulus: str = _option(
        "environment",
        "onset",
        "stimulus shown at the first step only, or always",
        choices=("onset", "always"),
    )
    reward_mode: str = _option("environment", "graded", "reward at arrival", choices=("graded", "exact"))
    seed: int = _option("run", 0, "random seed of the run")
    algo: str = _option(
        "learner",
        "ppo",
        "the update: ppo, PPO's clipped surrogate over several epochs of minibatches of each batch; "
        "a3c, one A3C gradient step per batch (the paper's)",
        choices=("ppo", "a3c"),
    )
    value_targets: str = _option(
        "learner",
        "gae",
        "value targets and advantages: gae, GAE(lambda) returns (on-policy); vtrace, V-trace, which "
        "corrects for the policy lag of actors that run ahead",
        choices=("gae", "vtrace"),
    )
    gae_lambda: float = _option("learner", 0.95, "lambda of GAE(lambda) (1: n-step returns, 0: one-step TD)")
    advantage_norm: bool = _option(
        "learner", True, "normalise the advantages of each (mini)batch to mean 0 and standard deviation 1"
    )
    return_norm: bool = _option(
        "learner",
        True,
        "divide the rewards by the running standard deviation of the discounted return (SB3 "
        "VecNormalize's norm_reward); its statistics are saved in the checkpoint",
    )
    ppo_epochs: int = _option("learner", 10, "PPO: passes over each batch")
    ppo_minibatches: int = _option(
        "learner",
        4,
        "PPO: minibatches per pass, each a set of whole env sequences re-run from their stored state",
    )
    clip_coef: float = _option("learner", 0.2, "PPO: clip of the probability ratio (epsilon)")
    value_clip: float = _option(
        "learner",
        0.0,
        "PPO: clip of the value's change from the acting policy's, in the value targets' units (0: no "
        "value clipping); it bounds how far the value loss moves a core the policy shares",
    )
    learning_rate: float = _option("learner", 7e-4, "Adam learning rate")
    adam_eps: float = _option(
        "learner",
        1e-8,
        "Adam's epsilon, added to the root of its second moment: larger, the steps of parameters whose "
        "gradient is tiny shrink with it instead of being scaled up to the learning rate",
    )
    unit_lr_scale: float = _option(
        "learner", 1.0, "the arithmetic units' weights learn at this multiple of --learning-rate"
    )
    gamma: float = _option("learner", 0.99, "discount factor")
    entropy_coef: float = _option(
        "learner", 0.01, "weight of the entropy bonus (its first, with --entropy-coef-final)"
    )
    entropy_coef_final: float | None = _option(
        "learner",
        None,
        "weight of the entropy bonus at the end of --total-steps, reached linearly from --entropy-coef "
        "(none: the weight stays --entropy-coef); a sampled policy ends sharper",
    )
    value_coef: float = _option("learner", 0.5, "weight of the value loss")
    max_grad_norm: float = _option("learner", 0.5, "gradient norm clip")
    grad_clip_by_part: bool = _option(
        "learner",
        False,
        "clip each part's gradient (encoder, each core, actor, critic, a teacher) to --max-grad-norm on "
        "its own, so that one part's large gradient does not shrink the others' steps",
    )
    regularizer_weight: float = _option(
        "learner", 0.1, "weight of the arithmetic units' regulariser (NAU/NMU sparsity) once warmed up"
    )
    regularizer_start_steps: int = _option(
        "learner", 1_000_000, "environment steps before the regulariser enters"
    )
    regularizer_end_steps: int = _option(
        "learner", 3_000_000, "environment steps at which the regulariser reaches its full weight"
    )
    regularizer_gate_success: float = _option(
        "learner",
        0.0,
        "0: the regulariser's start and end steps count from the beginning of training; p in (0, 1]: "
        "they count from the step at which the recent training success first reaches p (learner runtime)",
    )
    regularizer_gate_fall: float = _option(
        "learner",
        0.0,
        "0: once open, the regulariser's gate stays open; q in (0, --regularizer-gate-success): the gate "
        "closes (the ramp, and a teacher's handover, back to 0) when the recent training success falls "
        "below q, and opens again when it is back at --regularizer-gate-success",
    )
    handover_steps: int = _option(
        "learner",
        0,
        "a teacher's handover (Wiring.teacher_handover): 0, it follows the regulariser's ramp; N > 0, it "
        "ramps from 0 to 1 over N steps from the step at which the regulariser reaches its full weight",
    )
    handover_earned: float = _option(
        "learner",
        0.0,
        "0: the handover's ramp (--handover-steps) follows the steps; r in (0, 1]: with a teacher handing "
        "over by episodes, the student plays 1/10 of the episodes from the ramp's start and the ramp "
        "advances only while the student's recent success in its own episodes is at least r times the "
        "best the teacher's in theirs has been so far (learner runtime)",
    )
    handover_retreat: bool = _option(
        "learner",
        False,
        "with --handover-earned: the handover's ramp also goes back, through the batches in which the "
        "student does not keep up, so that a student that falls hands episodes back to its teacher",
    )
    rho_clip: float = _option("learner", 1.0, "V-trace importance weight clip (rho bar)")
    c_clip: float = _option("learner", 1.0, "V-trace trace cutting clip (c bar)")
    target_fraction: float = _option(
        "run", 0.9, "stop when recent success >= this fraction of the mean ceiling over the training range"
    )
    success_window: int = _option("run", 2000, "recent episodes over which the success rate is measured")
    max_bad_updates: int = _option("run", 20, "consecutive NaN/inf losses that stop the run")
    checkpoint_interval_s: float = _option(
        "run", 120.0, "seconds between checkpoints (one is also written at the end)"
    )
    log_interval_s: float = _option("run", 5.0, "seconds between TensorBoard writes")
    eval_episodes: int = _option("run", 200, "episodes per delay of the final evaluation (0 skips it)")
    eval_max_delay: int = _option("run", 40, "final evaluation runs delays 1..this")
    progress: bool = _option("run", True, "show a progress bar")
    logdir: str | None = _option("run", None, "run folder (default runs/<agent>-<obs>-<seed>-<time>)")
    resume: str | None = _option("run", None, "continue the run saved in this folder (its config is used)")

    def entropy_coef_at(self, steps: int) -> float:
        """The entropy bonus's weight after `steps` environment steps: --entropy-coef, or with
        --entropy-coef-final the straight line from it at step 0 to that at --total-steps."""
        if self.entropy_coef_final is None:
            return self.entropy_coef
        progress = min(max(steps / self.total_steps, 0.0), 1.0) if self.total_steps else 1.0
        return self.entropy_coef + progress * (self.entropy_coef_final - self.entropy_coef)

    def env_kwargs(self) -> dict[str, Any]:
        """The keyword arguments the run's environment is built with: the task options it takes (for
        TimeTrack obs_mode, size, delay_range, stimulus, reward_mode), then --env-kwargs over them."""
        from nalu_rl.environment import TASK_OPTION_KWARGS, task_options

        accepted = task_options(self.env_id)
        kwargs = {
            keyword: getattr(self, name)
            for name, keyword in TASK_OPTION_KWARGS.items()
            if keyword in accepted
        }
        if "delay_range" in kwargs:
            kwargs["delay_range"] = list(kwargs["delay_range"])
        return {**kwargs, **self.extra_env_kwargs}

    def environment(self) -> RunEnvironment:
        """The run's environment: --env-id built with `env_kwargs()`."""
        from nalu_rl.environment import RunEnvironment

        return RunEnvironment(self.env_id, self.env_kwargs())

    def is_timing_task(self) -> bool:
        """Whether --env-id is a timing task (its env class takes the task options), read without
        building an env."""
        from nalu_rl.environment import task_options

        return bool(task_options(self.env_id))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible dict of the config, with the env keyword arguments under "env"; an env
        that is not a timing task gets none of the timing-task fields (`TIMING_TASK_FIELDS`)."""
        values = dataclasses.asdict(self)
        values["delay_range"] = list(self.delay_range)
        if not self.is_timing_task():
            for name in TIMING_TASK_FIELDS:
                values.pop(name)
        values["env"] = self.env_kwargs()
        values["resolved_precision"], values["precision_reason"] = self.resolved_precision()
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Config:
        """Rebuild a Config from `to_dict` output (unknown keys such as "env" are ignored)."""
        names = {item.name for item in dataclasses.fields(cls)}
        kwargs = {key: value for key, value in values.items() if key in names}
        if "delay_range" in kwargs:
            kwargs["delay_range"] = tuple(kwargs["delay_range"])
        if "imports" in kwargs:
            kwargs["imports"] = list(kwargs["imports"])
        return cls(**kwargs)

    def save_json(self, path: str | os.PathLike) -> None:
        """Write the config as config.json-style JSON (atomically)."""
        write_text_atomically(path, json.dumps(self.to_dict(), indent=2) + "\n")

    def resolved_device(self) -> str:
        """The torch device string the learner runs on."""
        import torch

        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return self.device

    def resolved_precision(self) -> tuple[str, str]:
        """The learner's precision ("fp32" or "bf16") on its device, and why (`auto` resolved)."""
        from nalu_rl.precision import resolve_precision

        return resolve_precision(self.precision, self.resolved_device())

    def default_logdir(self) -> str:
        """runs/<agent>-<obs>-<seed>-<time> (TimeTrack), runs/<agent>-<env>-<seed>-<time> otherwise."""
        from nalu_rl.environment import DEFAULT_ENV_ID

        stamp = time.strftime("%Y%m%d-%H%M%S")
        task = self.obs if self.env_id == DEFAULT_ENV_ID else self.env_id.replace("/", "-")
        return str(Path("runs") / f"{self.agent}-{task}-{self.seed}-{stamp}")
