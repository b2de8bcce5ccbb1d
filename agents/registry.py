"""The named parts of the lab: cores, encoders and agents, each one table that user code extends
(the fourth, arithmetic units, is `nalu_rl.units.register_unit`'s, which an agent's `unit` names).

The project's own parts are registered through these same functions (`nalu_rl.agents.cores`,
`nalu_rl.agents.encoders`, `nalu_rl.agents.catalog`); a module of the user's, imported with
`--import MODULE`, adds its own the same way (docs/EXTENDING.md):

    register_core("gru", GRUCore)           # GRUCore(inputs, input_widths, size, wiring) -> a Core
    register_encoder("cnn", build_cnn)      # build_cnn(space, feature_size) -> an nn.Module
    register_agent("gru", replace(agent_wiring("lstm"), memory_core="gru"), "a GRU for the LSTM")

Names are looked up when a model is built, so an entry registered after import is seen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from nalu_rl.agents.wiring import WIRING_OPTIONS, Wiring
from nalu_rl.units.registry import ARITHMETIC_UNITS, check_entry_name

if TYPE_CHECKING:
    import gymnasium
    from torch import nn

    from nalu_rl.agents.core import Core

# (inputs, input_widths, size, wiring) -> Core: a core reading the signals `inputs` (widths by name),
# with a state of `size` units; `wiring` carries the agent's other settings (e.g. its unit).
CoreFactory = Callable[[tuple[str, ...], Mapping[str, int], int, Wiring], "Core"]
# (space, feature_size) -> module mapping a tensor [..., *space.shape] to [..., feature_size], or to
# [..., module.output_width] where the module has that attribute (the encoder "flat-exact").
EncoderFactory = Callable[["gymnasium.spaces.Box", int], "nn.Module"]


@dataclass(frozen=True)
class AgentSpec:
    """A registered agent: its wiring, a one-line summary (--list-agents), and the training options
    it trains the timing tasks with unless the command line sets them (Config field names to values)."""

    name: str
    wiring: Wiring
    summary: str
    training_defaults: Mapping[str, Any] = field(default_factory=dict)


CORES: dict[str, CoreFactory] = {}
ENCODERS: dict[str, EncoderFactory] = {}
AGENTS: dict[str, AgentSpec] = {}


def register_core(name: str, factory: CoreFactory, *, replace: bool = False) -> None:
    """Make `factory` the core called `name` (a Wiring's `memory_core` or `counter`)."""
    check_entry_name("core", name, CORES, replace)
    if not callable(factory):
        raise ValueError(f"core {name!r}: the factory must be callable, got {factory!r}")
    CORES[name] = factory


def register_encoder(name: str, factory: EncoderFactory, *, replace: bool = False) -> None:
    """Make `factory` the encoder called `name` (a Wiring's `encoder`)."""
    check_entry_name("encoder", name, ENCODERS, replace)
    if not callable(factory):
        raise ValueError(f"encoder {name!r}: the factory must be callable, got {factory!r}")
    ENCODERS[name] = factory


def register_agent(
    name: str,
    wiring: Wiring,
    summary: str,
    *,
    training_defaults: Mapping[str, Any] | None = None,
    replace: bool = False,
) -> AgentSpec:
    """Make `wiring` the agent called `name` (what `--agent NAME` trains) and return its entry.

    `summary` is one line for --list-agents; `training_defaults` are training options (Config
    field names) the agent trains the timing tasks with unless the command line gives them (on
    another env train's own defaults hold).
    """
    check_entry_name("agent", name, AGENTS, replace)
    if not isinstance(wiring, Wiring):
        raise ValueError(f"agent {name!r}: expected a Wiring, got {type(wiring).__name__}")
    wiring.validate()
    summary = " ".join(str(summary).split())
    if not summary:
        raise ValueError(f"agent {name!r}: give a one-line summary")
    spec = AgentSpec(name, wiring, summary, MappingProxyType(dict(training_defaults or {})))
    AGENTS[name] = spec
    return spec


def _lookup(kind: str, table: Mapping[str, Any], name: str) -> Any:
    if name not in table:
        known = ", ".join(table) or "none"
        raise ValueError(f"unknown {kind} {name!r}; registered {kind}s: {known}")
    return table[name]


def core_factory(name: str) -> CoreFactory:
    """The factory of the registered core `name` (ValueError naming the registered ones if none)."""
    return _lookup("core", CORES, name)


def encoder_factory(name: str) -> EncoderFactory:
    """The factory of the registered encoder `name` (ValueError naming the registered ones if none)."""
    return _lookup("encoder", ENCODERS, name)


def agent_spec(name: str) -> AgentSpec:
    """The registered agent `name` (ValueError naming the registered ones if none)."""
    return _lookup("agent", AGENTS, name)


def agent_names() -> tuple[str, ...]:
    """The registered agents' names, in the order they were registered."""
    return tuple(AGENTS)


def agent_wiring(name: str, **options: Any) -> Wiring:
    """The wiring of agent `name`, with any Wiring field overridden by `options` (e.g. counter_size=4)."""
    spec = agent_spec(name)
    unknown = sorted(set(options) - set(WIRING_OPTIONS))
    if unknown:
        raise ValueError(f"unknown agent options {unknown}; known options: {', '.join(WIRING_OPTIONS)}")
    wiring = replace(spec.wiring, **options)
    wiring.validate()
    return wiring


def check_parts_registered(wiring: Wiring) -> None:
    """ValueError naming the first core, encoder or unit that `wiring` names and no table holds."""
    cores = [wiring.memory_core] if wiring.has_memory else []
    for kind, names, table in (
        ("core", [*cores, *([wiring.counter] if wiring.counter is not None else [])], CORES),
        ("encoder", [] if wiring.encoder == "auto" else [wiring.encoder], ENCODERS),
        ("arithmetic unit", [wiring.unit], ARITHMETIC_UNITS),
    ):
        for name in names:
            _lookup(kind, table, name)


def describe_agents() -> dict[str, str]:
    """Each registered agent's one-line summary, by name."""
    return {name: spec.summary for name, spec in AGENTS.items()}
