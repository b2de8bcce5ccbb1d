"""Makes docs/RESULTS.md, "Which part failed: remembering the cue, not finding it (3 seeds each)".

Probes of MiniGrid's Memory task, an --import module: which part of the task keeps an agent from it.

Registers
  minigrid_probes/MemoryS7CueInView-v0: MemoryS7 (examples/minigrid_memory.py's wrapper) whose every
      episode starts where the cue is in the agent's first view (each reset is drawn again until
      MiniGrid's own `agent_sees` holds for the cue's cell): no looking back, only remembering;
  lstm-mlp: `lstm` with its observation entries read by the MLP, as "auto" read MiniGrid's view before
      the embedding encoder (the codes as magnitudes).

    PYTHONPATH=scripts/experiments:examples python -m nalu_rl.train --import minigrid_probes \
        --env-id minigrid_probes/MemoryS7CueInView-v0 --agent lstm-mlp
"""

from __future__ import annotations

from typing import Any

import gymnasium
import minigrid_memory

from nalu_rl.agents import agent_wiring, register_agent


def sees_cue(memory: Any) -> bool:
    """Whether the agent of a MiniGrid MemoryEnv sees the cue, the start room's object (at column 1
    of the row above the hallway), by MiniGrid's own `agent_sees`."""
    return bool(memory.agent_sees(1, memory.height // 2 - 1))


class StartWithCueInView(gymnasium.Wrapper):
    """Draws each reset again until the cue (the start room's object) is in the agent's first view."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        while not sees_cue(self.env.unwrapped):
            observation, info = self.env.reset()
        return observation, info


def make_cue_in_view(**kwargs: Any) -> gymnasium.Env:
    """MemoryS7 through the example's wrapper, every episode starting with the cue in view."""
    return StartWithCueInView(minigrid_memory.make_wrapped("MiniGrid-MemoryS7-v0", **kwargs))


gymnasium.register(id="minigrid_probes/MemoryS7CueInView-v0", entry_point=make_cue_in_view)
register_agent(
    "lstm-mlp",
    agent_wiring("lstm", encoder="mlp"),
    "lstm with every observation entry read by the MLP (integer codes as magnitudes).",
    replace=True,
)
