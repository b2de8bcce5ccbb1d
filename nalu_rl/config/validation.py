"""Whether a `Config` can work: one check per group of options (`OPTION_GROUPS`, the groups `--help`
lists: the agent, the runtime, the learner, the run, the environment), each raising InputError
naming the first option of its group whose value cannot work. The environment's comes last: it
builds one env."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nalu_rl.config.options import OPTION_GROUPS, Config
from nalu_rl.errors import InputError


def validate(config: Config) -> None:
    """Raise InputError naming the first option whose value cannot work (the checks of
    GROUP_CHECKS in their order)."""
    for check in GROUP_CHECKS.values():
        check(config)


def validate_agent(config: Config) -> None:
    """--agent is registered (after importing the --import modules), and so is every part it names."""
    from nalu_rl.agents import agent_names, agent_wiring, check_parts_registered
    from nalu_rl.agents.separate_critic import wiring_with_critic
    from nalu_rl.plugins import import_modules

    import_modules(config.imports)
    if config.agent not in agent_names():
        raise InputError(
            f"unknown agent {config.agent!r}; choose one of {', '.join(agent_names())} "
            "(or register yours in a module given to --import)"
        )
    try:
        wiring = agent_wiring(config.agent)
        check_parts_registered(wiring)
        wiring_with_critic(wiring, config.separate_critic)
    except ValueError as error:
        raise InputError(f"agent {config.agent!r}: {error}") from None


def validate_runtime(config: Config) -> None:
    """The processes, envs, buffers and device, and what each --runtime supports of the learner."""
    _require_at_least_one(
        config, ("envs_per_actor", "hogwild_envs", "unroll_length", "batch_unrolls", "buffers_per_actor")
    )
    _require_non_negative(config, ("actors", "learner_threads"))
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
    if config.runtime == "hogwild" and config.regularizer_gate_success:
        raise InputError(
            f"--regularizer-gate-success {config.regularizer_gate_success:g} needs --runtime learner "
            "(with hogwild give --regularizer-gate-success 0)"
        )
    if config.runtime == "hogwild" and config.handover_earned:
        raise InputError("--handover-earned needs --runtime learner (hogwild workers share no outcomes)")
    if config.runtime == "hogwild" and config.algo == "ppo":
        raise InputError("--algo ppo runs on --runtime learner; --runtime hogwild takes --algo a3c")
    if config.runtime == "hogwild" and config.return_norm:
        raise InputError(
            "--return-norm keeps one run's statistics, which hogwild workers do not share; "
            "give --no-return-norm with --runtime hogwild"
        )
    if config.runtime == "hogwild" and config.actors < 1:
        raise InputError("--runtime hogwild needs --actors of at least 1")
    if config.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("--device cuda asked for, but torch sees no CUDA device")


def validate_learner(config: Config) -> None:
    """The update's options: the regulariser's gate, PPO's, the entropy bonus, the targets, the rates."""
    if not 0.0 <= config.regularizer_gate_success <= 1.0:
        gate = config.regularizer_gate_success
        raise InputError(f"--regularizer-gate-success must be in [0, 1], got {gate}")
    fall = config.regularizer_gate_fall
    if fall and not 0.0 < fall < config.regularizer_gate_success:
        raise InputError(
            f"--regularizer-gate-fall must be 0 or between 0 and --regularizer-gate-success "
            f"({config.regularizer_gate_success:g}), got {fall:g}"
        )
    _require_at_least_one(config, ("ppo_epochs", "ppo_minibatches"))
    for name in ("entropy_coef", "entropy_coef_final"):
        value = getattr(config, name)
        if value is not None and not 0.0 <= value < float("inf"):  # also rejects NaN
            raise InputError(f"--{_flag(name)} must not be negative, got {value}")
    if not 0.0 <= config.gae_lambda <= 1.0:
        raise InputError(f"--gae-lambda must be in [0, 1], got {config.gae_lambda}")
    if not config.clip_coef > 0.0:
        raise InputError(f"--clip-coef must be positive, got {config.clip_coef}")
    if not config.value_clip >= 0.0:
        raise InputError(f"--value-clip must not be negative, got {config.value_clip}")
    if not 0.0 < config.gamma <= 1.0:
        raise InputError(f"--gamma must be in (0, 1], got {config.gamma}")
    if not 0.0 < config.adam_eps < float("inf"):  # also rejects NaN
        raise InputError(f"--adam-eps must be positive, got {config.adam_eps}")
    if config.learning_rate <= 0:
        raise InputError(f"--learning-rate must be positive, got {config.learning_rate}")
    if not 0 < config.unit_lr_scale < float("inf"):  # also rejects NaN
        raise InputError(f"--unit-lr-scale must be positive, got {config.unit_lr_scale}")
    _require_non_negative(config, ("handover_steps",))
    if not 0.0 <= config.handover_earned <= 1.0:
        raise InputError(f"--handover-earned must be 0 or in (0, 1], got {config.handover_earned:g}")
    if config.handover_earned and not config.handover_steps:
        raise InputError("--handover-earned advances the ramp of --handover-steps N: set N > 0")
    if config.handover_retreat and not config.handover_earned:
        raise InputError("--handover-retreat takes back an earned handover: set --handover-earned r")


def validate_run(config: Config) -> None:
    """The run's budgets, its success window and target, and its final evaluation."""
    _require_non_negative(config, ("total_steps", "time_budget_s", "eval_episodes", "success_window"))
    if not config.target_fraction >= 0.0:
        raise InputError(f"--target-fraction must not be negative, got {config.target_fraction}")


def validate_environment(config: Config) -> None:
    """The task options, then one env built from --env-id and them (unknown ids, bad keyword
    arguments and continuous actions fail there; the device runtime steps the timing gridworlds only)."""
    _require_at_least_one(config, ("size",))
    low, high = config.delay_range
    if not 1 <= low <= high:
        raise InputError(f"--delay-range must satisfy 1 <= LO <= HI, got {low} {high}")
    with config.environment() as environment:
        environment.spaces()
        if config.runtime == "device":
            environment.grid_task_config()


# The check of each group of options (OPTION_GROUPS), in the order `validate` runs them.
GROUP_CHECKS: dict[str, Callable[[Config], None]] = {
    "agent": validate_agent,
    "runtime": validate_runtime,
    "learner": validate_learner,
    "run": validate_run,
    "environment": validate_environment,
}
if set(GROUP_CHECKS) != set(OPTION_GROUPS):
    raise AssertionError("a group of options without its check (or a check without its group)")


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _require_at_least_one(config: Config, names: Sequence[str]) -> None:
    for name in names:
        if getattr(config, name) < 1:
            raise InputError(f"--{_flag(name)} must be at least 1, got {getattr(config, name)}")


def _require_non_negative(config: Config, names: Sequence[str]) -> None:
    for name in names:
        if getattr(config, name) < 0:
            raise InputError(f"--{_flag(name)} must not be negative, got {getattr(config, name)}")
