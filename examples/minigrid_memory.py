"""MiniGrid's Memory task for nalu_rl: the wrapper a user of MiniGrid writes (docs/EXTENDING.md).

MiniGrid (`pip install minigrid`, or `pip install -e ".[minigrid]"`) observes a Dict of `image` (the
agent's 7x7 view, 3 symbolic channels), `direction` (Discrete(4)) and `mission` (a text). nalu_rl reads
the first two (the image's object, colour and state indices through the embedding encoder, the
direction one-hot) but not a text, so the wrapper drops `mission`. It also says on an episode's last
step whether it was a success (in Memory: reaching the object that matches the one seen at the
start), which nalu_rl reports as the success rate.

From this folder (or with it on PYTHONPATH):
    python -m nalu_rl.train --import minigrid_memory --env-id minigrid_memory/MemoryS7-v0 --agent lstm
Any MiniGrid id goes through the same wrapper: `minigrid_memory/wrapped-v0` with
`--env-kwargs '{"minigrid_id": "MiniGrid-DoorKey-5x5-v0"}'`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import minigrid  # noqa: F401  (registers the MiniGrid-* ids)


class DropMission(gymnasium.ObservationWrapper):
    """MiniGrid's observation without its `mission` text: a Dict of `image` and `direction`."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        kept = {key: space for key, space in env.observation_space.spaces.items() if key != "mission"}
        self.observation_space = gymnasium.spaces.Dict(kept)

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        return {key: observation[key] for key in self.observation_space.spaces}


class ReportSuccess(gymnasium.Wrapper):
    """Puts `info["success"]` on an episode's last step: it ended with a positive reward (MiniGrid
    pays only for reaching the goal, less the time taken)."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info = {**info, "success": bool(terminated and reward > 0)}
        return observation, reward, terminated, truncated, info


def make_wrapped(minigrid_id: str = "MiniGrid-MemoryS11-v0", **kwargs: Any) -> gymnasium.Env:
    """The MiniGrid env `minigrid_id`, without its mission, reporting success."""
    return ReportSuccess(DropMission(gymnasium.make(minigrid_id, **kwargs)))


gymnasium.register(id="minigrid_memory/wrapped-v0", entry_point=make_wrapped)
for size in (7, 9, 11, 13, 17):
    gymnasium.register(
        id=f"minigrid_memory/MemoryS{size}-v0",
        entry_point=make_wrapped,
        kwargs={"minigrid_id": f"MiniGrid-MemoryS{size}-v0"},
    )
