"""nalu_rl.agents: the actor-critic networks (encoders, cores, heads), their losses, and the public
registries of cores, encoders and agents that the project's own parts and a user's go through
(with `register_unit` and `ArithmeticUnit` of `nalu_rl.units`, so one import serves a plug-in)."""

from nalu_rl.agents import catalog as _catalog  # noqa: F401  (registers the project's agents)
from nalu_rl.agents import cores as _cores  # noqa: F401  (registers the project's cores)
from nalu_rl.agents.core import Core
from nalu_rl.agents.encoders import OBSERVATION_KEY, STIMULUS_KEY
from nalu_rl.agents.losses import (
    LossTerms,
    VTraceReturns,
    action_log_probs,
    actor_critic_loss,
    gae_advantages,
    normalize_advantages,
    nstep_returns,
    policy_entropy,
    ppo_loss,
    vtrace,
)
from nalu_rl.agents.model import ActorCritic, make_agent
from nalu_rl.agents.observations import observation_dict_space
from nalu_rl.agents.registry import (
    AgentSpec,
    agent_names,
    agent_spec,
    agent_wiring,
    check_parts_registered,
    describe_agents,
    register_agent,
    register_core,
    register_encoder,
)
from nalu_rl.agents.wiring import Wiring
from nalu_rl.units import ArithmeticUnit, register_unit

__all__ = [
    "ActorCritic",
    "AgentSpec",
    "ArithmeticUnit",
    "Core",
    "LossTerms",
    "OBSERVATION_KEY",
    "STIMULUS_KEY",
    "VTraceReturns",
    "Wiring",
    "action_log_probs",
    "actor_critic_loss",
    "agent_names",
    "agent_spec",
    "agent_wiring",
    "check_parts_registered",
    "describe_agents",
    "gae_advantages",
    "make_agent",
    "normalize_advantages",
    "nstep_returns",
    "observation_dict_space",
    "policy_entropy",
    "ppo_loss",
    "register_agent",
    "register_core",
    "register_encoder",
    "register_unit",
    "vtrace",
]
