"""Makes docs/POPGYM_DEFAULTS.md, "The value loss through the shared LSTM".

`lstm` with a critic whose loss cannot move the LSTM the actor reads, registered for `--import`:

    cd scripts/experiments && python -m nalu_rl.train --import popgym --import critic_variants \
        --agent lstm-critic-detached --env-id popgym-RepeatPreviousEasy-v0 --seed 0 \
        --total-steps 200000 --eval-episodes 0 --actors 0 --learner-threads 1

- lstm-critic-detached: `lstm` whose linear critic reads h_t with its gradient stopped (a wiring's
  `critic_detached`): the LSTM and the encoder learn from the policy's loss alone.
- lstm-critic-detached-mlp: the same with an MLP(128) critic, since a linear value of a state the
  value loss cannot shape may be too weak a baseline.
- lstm-critic-separate: `lstm` whose critic has an encoder and an LSTM of its own (a wiring's
  `critic_separate`, sb3-contrib RecurrentPPO's default): the value loss shapes features, but not
  the actor's.
- lstm-critic-encoder: `lstm` whose critic has an encoder of its own and reads the actor's h_t with
  its gradient stopped (a wiring's `critic_own_memory` off): the value loss shapes the critic's own
  features of the observation, and the learner steps one LSTM, not two.
"""

from __future__ import annotations

from dataclasses import replace

from nalu_rl.agents.catalog import LSTM
from nalu_rl.agents.registry import register_agent

_DETACHED = replace(LSTM, critic_detached=True)
register_agent(
    "lstm-critic-detached", _DETACHED, "lstm; its linear critic reads h with the gradient stopped."
)
register_agent(
    "lstm-critic-detached-mlp",
    replace(_DETACHED, critic_hidden=128),
    "lstm-critic-detached with an MLP(128) critic.",
)
register_agent(
    "lstm-critic-separate",
    replace(LSTM, critic_separate=True),
    "lstm whose critic has an encoder and an LSTM of its own.",
)
register_agent(
    "lstm-critic-encoder",
    replace(LSTM, critic_separate=True, critic_own_memory=False, critic_inputs=("encoder", "memory")),
    "lstm whose critic has an encoder of its own and reads the actor's h with the gradient stopped.",
)
