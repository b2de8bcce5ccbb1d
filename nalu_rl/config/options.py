"""The one configuration of a training run: the command line, config.json, the checkpoint and the
TensorBoard hparams are all derived from the `Config` dataclass below."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nalu_rl.errors import InputError
from nalu_rl.files import write_text_atomically
from nalu_rl.plugins import IMPORT_FLAG, TRUST_IMPORTS_FLAG

if TYPE_CHECKING:
    from nalu_rl.environment import RunEnvironment


def _option(default: Any, help: str, **argparse_kwargs: Any) -> Any:
    """A dataclass field carrying its one-line help (shown by --help) and extra argparse settings
    (`flag` names its option where that is not the field's name)."""
    if isinstance(default, (dict, list)):
        return field(
            default_factory=lambda: type(default)(default), metadata={"help": help, **argparse_kwargs}
        )
    return field(default=default, metadata={"help": help, **argparse_kwargs})


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
        "learned-count",
        "agent (core) to train (the default on an env that is not a timing task: lstm)",
    )
    env_id: str = _option(
        "nalu_rl/TimeTrack-v0",
        "Gymnasium id of the environment (Discrete or MultiDiscrete actions; observations of Box, "
        "Discrete, MultiDiscrete, MultiBinary, nested in Dict and Tuple; e.g. nalu_rl/IntervalTiming-v0, "
        "FrozenLake-v1, or one registered by an --import module)",
    )
    extra_env_kwargs: dict = _option(
        {},
        "keyword arguments of the environment, a JSON object (over the task options below)",
        flag="--env-kwargs",
        type=_json_object,
        metavar="JSON",
    )
    imports: list = _option(
        [],
        "a module of yours to import first, in the learner and every worker (repeatable); it may "
        "register cores, encoders, agents and environments; recorded in the run for evaluate/render",
        flag=IMPORT_FLAG,
        action="append",
        metavar="MODULE",
    )
    obs: str = _option(
        "pixels",
        "observation mode of a timing task (TimeTrack, IntervalTiming)",
        choices=("pixels", "symbolic"),
    )
    runtime: str = _option(
        "learner",
        "learner: actor processes feed one learner; hogwild: workers update one shared model; device: "
        "the timing task as tensors, the policy and the learner in one process on --device, stepping "
        "--actors x --envs-per-actor envs as one batch",
        choices=("learner", "hogwild", "device"),
    )
    actors: int = _option(2, "actor (or hogwild worker) processes; 0 runs the learner runtime in one process")
    envs_per_actor: int = _option(
        32,
        "environments stepped together by each actor (device: times --actors; the project's agents on "
        "a timing task: 64)",
    )
    hogwild_envs: int = _option(1, "environments per hogwild worker (the classic A3C uses 1)")
    unroll_length: int = _option(20, "environment steps per rollout (n of the n-step returns)")
    batch_unrolls: int = _option(2, "actor rollouts stacked into one learner batch")
    buffers_per_actor: int = _option(2, "shared rollout buffers per actor; bounds how far actors run ahead")
    synchronous: bool = _option(
        True,
        "actors wait for the newest weights before each unroll and a batch is one unroll per actor "
        "(policy lag 0, as in A2C; --batch-unrolls and --buffers-per-actor then do not apply); "
        "--no-synchronous lets actors run ahead of the learner, which LSTM policies do not survive",
    )
    device: str = _option(
        "auto", "learner device (auto: cuda when available)", choices=("auto", "cpu", "cuda")
    )
    precision: str = _option(
        "auto",
        "numeric precision of the learner and the actors' acting: bf16 runs the layers under bfloat16 "
        "autocast (the counter, its state, the loss and the weights stay float32); auto: bf16 where the "
        "device computes it natively (CUDA with bf16, a CPU with AMX or AVX-512 BF16), else fp32",
        choices=("auto", "fp32", "bf16"),
    )
    learner_threads: int = _option(
        0,
        "torch threads of the learner (0: every core with synchronous actors, which wait while it "
        "learns; else the cores the actors leave, less one)",
    )
    total_steps: int = _option(20_000_000, "budget of environment steps")
    time_budget_s: float = _option(
        0.0, "also stop after this many seconds of training in this process (0: no time limit)"
    )
    delay_range: tuple[int, int] = _option(
        (5, 12), "training delays T, LO HI inclusive", metavar=("LO", "HI")
    )
    size: int = _option(5, "side of the square grid")
    stimulus: str = _option(
        "onset", "stimulus shown at the first step only, or always", choices=("onset", "always")
    )
    reward_mode: str = _option("graded", "reward at arrival", choices=("graded", "exact"))
    seed: int = _option(0, "random seed of the run")
    algo: str = _option(
        "ppo",
        "the update: ppo, PPO's clipped surrogate over several epochs of minibatches of each batch; "
        "a3c, one A3C gradient step per batch (the paper's)",
        choices=("ppo", "a3c"),
    )
    value_targets: str = _option(
        "gae",
        "value targets and advantages: gae, GAE(lambda) returns (on-policy); vtrace, V-trace, which "
        "corrects for the policy lag of actors that run ahead",
        choices=("gae", "vtrace"),
    )
    gae_lambda: float = _option(0.95, "lambda of GAE(lambda) (1: n-step returns, 0: one-step TD)")
    advantage_norm: bool = _option(
        True, "normalise the advantages of each (mini)batch to mean 0 and standard deviation 1"
    )
    return_norm: bool = _option(
        True,
        "divide the rewards by the running standard deviation of the discounted return (SB3 "
        "VecNormalize's norm_reward); its statistics are saved in the checkpoint",
    )
    ppo_epochs: int = _option(10, "PPO: passes over each batch")
    ppo_minibatches: int = _option(
        4, "PPO: minibatches per pass, each a set of whole env sequences re-run from their stored state"
    )
    clip_coef: float = _option(0.2, "PPO: clip of the probability ratio (epsilon)")
    value_clip: float = _option(
        0.0, "PPO: clip of the value's change from the acting policy's (0: no value clipping)"
    )
    learning_rate: float = _option(7e-4, "Adam learning rate")
    unit_lr_scale: float = _option(
        1.0, "the arithmetic units' weights learn at this multiple of --learning-rate"
    )
    gamma: float = _option(0.99, "discount factor")
    entropy_coef: float = _option(0.01, "weight of the entropy bonus (its first, with --entropy-coef-final)")
    entropy_coef_final: float | None = _option(
        None,
        "weight of the entropy bonus at the end of --total-steps, reached linearly from --entropy-coef "
        "(none: the weight stays --entropy-coef); a sampled policy ends sharper",
    )
    value_coef: float = _option(0.5, "weight of the value loss")
    max_grad_norm: float = _option(0.5, "gradient norm clip")
    regularizer_weight: float = _option(
        0.1, "weight of the arithmetic units' regulariser (NAU/NMU sparsity) once warmed up"
    )
    regularizer_start_steps: int = _option(1_000_000, "environment steps before the regulariser enters")
    regularizer_end_steps: int = _option(
        3_000_000, "environment steps at which the regulariser reaches its full weight"
    )
    regularizer_gate_success: float = _option(
        0.0,
        "0: the regulariser's start and end steps count from the beginning of training; p in (0, 1]: "
        "they count from the step at which the recent training success first reaches p (learner runtime)",
    )
    rho_clip: float = _option(1.0, "V-trace importance weight clip (rho bar)")
    c_clip: float = _option(1.0, "V-trace trace cutting clip (c bar)")
    target_fraction: float = _option(
        0.9, "stop when recent success >= this fraction of the mean ceiling over the training range"
    )
    success_window: int = _option(2000, "recent episodes over which the success rate is measured")
    max_bad_updates: int = _option(20, "consecutive NaN/inf losses that stop the run")
    checkpoint_interval_s: float = _option(
        120.0, "seconds between checkpoints (one is also written at the end)"
    )
    log_interval_s: float = _option(5.0, "seconds between TensorBoard writes")
    eval_episodes: int = _option(200, "episodes per delay of the final evaluation (0 skips it)")
    eval_max_delay: int = _option(40, "final evaluation runs delays 1..this")
    progress: bool = _option(True, "show a progress bar")
    logdir: str | None = _option(None, "run folder (default runs/<agent>-<obs>-<seed>-<time>)")
    resume: str | None = _option(None, "continue the run saved in this folder (its config is used)")

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


def agent_training_defaults(agent: str) -> dict[str, Any]:
    """The training options `agent` trains the timing tasks with unless the command line sets them
    (its registry entry's: those of its measured runs); empty for an unknown agent. InputError if
    the entry names an option that is not a Config field."""
    from nalu_rl.agents import agent_names, agent_spec

    if agent not in agent_names():
        return {}
    defaults = dict(agent_spec(agent).training_defaults)
    unknown = sorted(set(defaults) - {item.name for item in dataclasses.fields(Config)})
    if unknown:
        raise InputError(f"agent {agent!r} sets training defaults of unknown options {unknown}")
    return defaults


def _field_type(item: dataclasses.Field) -> Any:
    hints = typing.get_type_hints(Config)
    kind = hints[item.name]
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
    return kind


def _agent_list(agents: list[str], agents_with_defaults: int) -> str:
    if len(agents) == agents_with_defaults and len(agents) > 3:
        return "every agent with training defaults"
    return ", ".join(agents)


def build_parser(defaults: bool = True) -> argparse.ArgumentParser:
    """The argparse parser of `python -m nalu_rl.train`, one option per Config field.

    With `defaults=False` an option absent from the command line is absent from the result.
    """
    parser = argparse.ArgumentParser(
        prog="python -m nalu_rl.train",
        description="Train an actor-critic agent on TimeTrack (reach the target exactly T steps after the "
        "stimulus), or on any Gymnasium env with --env-id, until the training-range target is met or "
        "the step budget is spent.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    from nalu_rl.agents import describe_agents

    agents_defaults = {name: agent_training_defaults(name) for name in describe_agents()}
    agents_defaults = {name: defaults for name, defaults in agents_defaults.items() if defaults}

    parser.add_argument(
        "--list-agents",
        action="store_true",
        default=False if defaults else argparse.SUPPRESS,
        help="print a table of the agents (name, description, shipped checkpoints) and exit",
    )
    parser.add_argument(
        TRUST_IMPORTS_FLAG,
        action="store_true",
        default=False if defaults else argparse.SUPPRESS,
        help="with --resume: import the modules the run records without naming each with --import "
        "(importing runs their code: only for runs you trust)",
    )
    for item in dataclasses.fields(Config):
        flag = item.metadata.get("flag", "--" + item.name.replace("_", "-"))
        kind = _field_type(item)
        extra = {key: value for key, value in item.metadata.items() if key not in ("help", "flag")}
        default = item.default if item.default is not dataclasses.MISSING else item.default_factory()
        extra["default"] = default if defaults else argparse.SUPPRESS
        help_text = item.metadata["help"]
        if item.name == "agent":
            help_text = (
                f"{help_text}: one of {', '.join(describe_agents())}; on a timing task an agent's "
                "measured options are the defaults of the options whose help names it"
            )
        by_value: dict[str, list[str]] = {}
        for agent, agent_defaults in agents_defaults.items():
            if item.name in agent_defaults:
                by_value.setdefault(str(agent_defaults[item.name]), []).append(agent)
        if by_value:
            shown = "; ".join(
                f"{_agent_list(agents, len(agents_defaults))}: {value}" for value, agents in by_value.items()
            )
            help_text += f" (on a timing task {shown}, unless given)"
        if "action" in extra or "type" in extra:
            parser.add_argument(flag, dest=item.name, help=help_text, **extra)
        elif kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text, **extra)
        elif typing.get_origin(kind) is tuple:
            element = typing.get_args(kind)[0]
            parser.add_argument(flag, type=element, nargs=2, help=help_text, **extra)
        else:
            parser.add_argument(flag, type=kind, help=help_text, **extra)
    return parser


def parse_config(argv: Sequence[str] | None = None) -> tuple[Config, set[str]]:
    """Parse the command line into a Config; also return the names of the options given explicitly.

    On a timing task the agent's registered training defaults replace the defaults of the options not
    given; on another env --agent defaults to GENERIC_DEFAULT_AGENT and the Config defaults hold. A
    malformed option raises InputError (argparse's usage text and exit are not used). --trust-imports
    is no setting of the run: given, it is among the explicit names as "trust_imports", never in the
    Config.
    """

    def one_line_error(message: str) -> None:
        raise InputError(message)

    from nalu_rl.plugins import import_modules, modules_in_argv

    # The user's modules first: the agents and envs they register are options of this parser.
    import_modules(modules_in_argv(list(sys.argv[1:] if argv is None else argv)))
    parser, explicit_parser = build_parser(), build_parser(defaults=False)
    # argparse exits with its own usage text on a malformed option; make that a one-line error.
    parser.error = explicit_parser.error = one_line_error  # type: ignore[method-assign]
    values = vars(parser.parse_args(argv))
    given = set(vars(explicit_parser.parse_args(argv)))
    values["delay_range"] = tuple(values["delay_range"])
    values.pop("list_agents")
    values.pop("trust_imports")
    given.discard("list_agents")
    config = Config(**values)
    if not config.is_timing_task():
        if "agent" not in given:
            config.agent = GENERIC_DEFAULT_AGENT
        return config, given
    for name, value in agent_training_defaults(config.agent).items():
        if name not in given:
            setattr(config, name, value)
    return config, given


def validate(config: Config) -> None:
    """Raise InputError naming the first option whose value cannot work."""
    from nalu_rl.agents import agent_names, agent_wiring, check_parts_registered
    from nalu_rl.plugins import import_modules

    import_modules(config.imports)
    if config.agent not in agent_names():
        raise InputError(
            f"unknown agent {config.agent!r}; choose one of {', '.join(agent_names())} "
            "(or register yours in a module given to --import)"
        )
    try:
        check_parts_registered(agent_wiring(config.agent))
    except ValueError as error:
        raise InputError(f"agent {config.agent!r}: {error}") from None
    positive = (
        "envs_per_actor",
        "hogwild_envs",
        "unroll_length",
        "batch_unrolls",
        "buffers_per_actor",
        "size",
    )
    for name in positive:
        if getattr(config, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(config, name)}")
    non_negative = (
        "actors",
        "total_steps",
        "time_budget_s",
        "learner_threads",
        "eval_episodes",
        "success_window",
    )
    for name in non_negative:
        if getattr(config, name) < 0:
            raise InputError(f"--{name.replace('_', '-')} must not be negative, got {getattr(config, name)}")
    buffers = config.actors * config.buffers_per_actor
    if (
        config.runtime == "learner"
        and config.actors
        and not config.synchronous
        and config.batch_unrolls > buffers
    ):
        raise InputError(
            f"--batch-unrolls {config.batch_unrolls} needs as many rollout buffers, but --actors "
            f"{config.actors} x --buffers-per-actor {config.buffers_per_actor} gives {buffers}"
        )
    if not 0.0 <= config.regularizer_gate_success <= 1.0:
        gate = config.regularizer_gate_success
        raise InputError(f"--regularizer-gate-success must be in [0, 1], got {gate}")
    if config.runtime == "hogwild" and config.regularizer_gate_success:
        raise InputError(
            f"--regularizer-gate-success {config.regularizer_gate_success:g} needs --runtime learner "
            "(with hogwild give --regularizer-gate-success 0)"
        )
    if config.runtime == "hogwild" and config.algo == "ppo":
        raise InputError("--algo ppo runs on --runtime learner; --runtime hogwild takes --algo a3c")
    if config.runtime == "hogwild" and config.return_norm:
        raise InputError(
            "--return-norm keeps one run's statistics, which hogwild workers do not share; "
            "give --no-return-norm with --runtime hogwild"
        )
    for name in ("ppo_epochs", "ppo_minibatches"):
        if getattr(config, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(config, name)}")
    for name in ("entropy_coef", "entropy_coef_final"):
        value = getattr(config, name)
        if value is not None and not 0.0 <= value < float("inf"):  # also rejects NaN
            raise InputError(f"--{name.replace('_', '-')} must not be negative, got {value}")
    if not 0.0 <= config.gae_lambda <= 1.0:
        raise InputError(f"--gae-lambda must be in [0, 1], got {config.gae_lambda}")
    if not config.clip_coef > 0.0:
        raise InputError(f"--clip-coef must be positive, got {config.clip_coef}")
    if not config.value_clip >= 0.0:
        raise InputError(f"--value-clip must not be negative, got {config.value_clip}")
    if config.runtime == "hogwild" and config.actors < 1:
        raise InputError("--runtime hogwild needs --actors of at least 1")
    low, high = config.delay_range
    if not 1 <= low <= high:
        raise InputError(f"--delay-range must satisfy 1 <= LO <= HI, got {low} {high}")
    if not 0.0 < config.gamma <= 1.0:
        raise InputError(f"--gamma must be in (0, 1], got {config.gamma}")
    if config.learning_rate <= 0:
        raise InputError(f"--learning-rate must be positive, got {config.learning_rate}")
    if not 0 < config.unit_lr_scale < float("inf"):  # also rejects NaN
        raise InputError(f"--unit-lr-scale must be positive, got {config.unit_lr_scale}")
    if not config.target_fraction >= 0.0:
        raise InputError(f"--target-fraction must not be negative, got {config.target_fraction}")
    with config.environment() as environment:
        environment.spaces()  # builds one env: unknown ids, bad kwargs and continuous actions fail here
        if config.runtime == "device":
            environment.grid_task_config()  # the device runtime steps the timing gridworlds only
    if config.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("--device cuda asked for, but torch sees no CUDA device")
