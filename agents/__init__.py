"""agents: the actor-critic networks (encoders, LSTM / NAC / NALU / NAU cores, heads) and their losses."""

from nalu_rl.agents.losses import (
    LossTerms,
    VTraceReturns,
    action_log_probs,
    actor_critic_loss,
    gae_advantages,
    nstep_returns,
    vtrace,
)
from nalu_rl.agents.model import ActorCritic, Wiring
from nalu_rl.agents.registry import AGENT_NAMES, agent_wiring, describe_agents, make_agent

__all__ = [
    "AGENT_NAMES",
    "ActorCritic",
    "LossTerms",
    "VTraceReturns",
    "Wiring",
    "action_log_probs",
    "actor_critic_loss",
    "agent_wiring",
    "describe_agents",
    "gae_advantages",
    "make_agent",
    "nstep_returns",
    "vtrace",
]
