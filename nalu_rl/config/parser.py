"""The command line of `python -m nalu_rl.train`, generated from `Config`'s fields: one option a
field, listed in its group of options, its help the field's, the agents' registered training
defaults shown beside the options they set, and `parse_config`, which puts those defaults under the
options not given."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from nalu_rl.config.options import GENERIC_DEFAULT_AGENT, OPTION_GROUPS, Config
from nalu_rl.errors import InputError
from nalu_rl.plugins import TRUST_IMPORTS_FLAG


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
    """The argparse parser of `python -m nalu_rl.train`, one option per Config field, listed by --help
    in the field's group (OPTION_GROUPS).

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

    groups = {name: parser.add_argument_group(title) for name, title in OPTION_GROUPS.items()}
    groups["agent"].add_argument(
        "--list-agents",
        action="store_true",
        default=False if defaults else argparse.SUPPRESS,
        help="print a table of the agents (name, description, shipped checkpoints) and exit",
    )
    groups["run"].add_argument(
        TRUST_IMPORTS_FLAG,
        action="store_true",
        default=False if defaults else argparse.SUPPRESS,
        help="with --resume: import the modules the run records without naming each with --import "
        "(importing runs their code: only for runs you trust)",
    )
    for item in dataclasses.fields(Config):
        group = groups[item.metadata["group"]]
        flag = item.metadata.get("flag", "--" + item.name.replace("_", "-"))
        kind = _field_type(item)
        extra = {key: value for key, value in item.metadata.items() if key not in ("group", "help", "flag")}
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
            group.add_argument(flag, dest=item.name, help=help_text, **extra)
        elif kind is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text, **extra)
        elif typing.get_origin(kind) is tuple:
            element = typing.get_args(kind)[0]
            group.add_argument(flag, type=element, nargs=2, help=help_text, **extra)
        else:
            group.add_argument(flag, type=kind, help=help_text, **extra)
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
