"""Checkpoint files: written atomically, read back without unpickling anything but tensors.

A checkpoint is a dict of plain Python values and tensors:
  "format": CHECKPOINT_FORMAT
  "config": the run's configuration as a JSON-compatible dict (see nalu_rl.config)
  "model": the ActorCritic state_dict
  "wiring": the agent's Wiring; "observation": each observation leaf's space, transform and encoder
  (`ActorCritic.observation_preprocessing`); "action_sizes": the actions' sizes (int or list)
  and, in training checkpoints, whatever the runtime needs to resume (optimizer state, step
  counts, RNG states), all of it loadable with `torch.load(..., weights_only=True)`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

from nalu_rl.errors import CheckpointError, InputError
from nalu_rl.files import replace_atomically

CHECKPOINT_FORMAT = "nalu_rl-checkpoint-1"
# The pretrained checkpoints shipped inside the package: `<agent>.pt` (symbolic TimeTrack), with
# `-interval` for IntervalTiming and `-pixels` for pixel observations (`<agent>-interval-pixels.pt`).
SHIPPED_FOLDER = Path(__file__).resolve().parent / "checkpoints"
SHIPPED_SUFFIXES = ("", "-pixels", "-interval", "-interval-pixels")


def save_checkpoint(path: str | os.PathLike, payload: dict[str, Any]) -> None:
    """Write `payload` to `path` atomically: a reader sees the old file or the new one, never half."""
    payload = {"format": CHECKPOINT_FORMAT, **payload}
    replace_atomically(path, lambda file: torch.save(payload, file))


def load_checkpoint(path: str | os.PathLike, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint with `weights_only=True`; a missing, corrupt or foreign file raises
    CheckpointError."""
    path = Path(path)
    if path.is_dir():
        path = path / "checkpoint.pt"
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises many kinds for a corrupt, truncated or unsafe file
        if "Unsupported global" in str(error):
            raise CheckpointError(
                f"cannot read checkpoint {path}: it holds objects other than weights, which are never loaded"
            ) from None
        raise CheckpointError(f"cannot read checkpoint {path}: corrupt or not a torch file") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a nalu_rl checkpoint")
    if not isinstance(payload.get("config"), dict) or not isinstance(payload.get("model"), dict):
        raise CheckpointError(f"{path} is not a nalu_rl checkpoint (no config or model weights)")
    return payload


def build_model(
    agent: str,
    observation_space: Any,
    num_actions: int | tuple[int, ...],
    stored_wiring: dict[str, Any] | None,
    stored_observation: dict[str, dict[str, str]] | None = None,
) -> torch.nn.Module:
    """The untrained ActorCritic of a run of `agent` for these spaces: built from the run's stored
    wiring, or from the registry's current wiring of `agent` where none was stored, with each
    observation leaf's encoder as `stored_observation` records it (the "auto" pick where none).

    Raises ValueError or TypeError for an invalid wiring, an unknown agent or an unregistered part.
    """
    from nalu_rl.agents import ActorCritic, Wiring, agent_wiring

    wiring = Wiring.from_dict(stored_wiring) if stored_wiring is not None else agent_wiring(agent)
    leaf_encoders = {key: entry["encoder"] for key, entry in (stored_observation or {}).items()}
    return ActorCritic(observation_space, num_actions, wiring, name=agent, leaf_encoders=leaf_encoders)


def describe_leaves(observation_space: Any) -> str:
    """The leaves of a flat Dict observation space in one line ("image: Box(...), direction: Discrete(4)")."""
    return ", ".join(f"{key}: {entry}" for key, entry in observation_space.spaces.items())


def check_spaces(
    payload: dict[str, Any], observation_space: Any, num_actions: int | tuple[int, ...], source: str
) -> None:
    """CheckpointError in one line when the env's spaces are not those the checkpoint was trained on
    (its "observation" and "action_sizes" records; a checkpoint without them is not checked)."""
    stored = payload.get("observation")
    if isinstance(stored, dict):
        trained = {key: entry.get("space") for key, entry in stored.items()}
        now = {key: str(entry) for key, entry in observation_space.spaces.items()}
        if trained != now:
            listed = ", ".join(f"{key}: {space}" for key, space in trained.items())
            raise CheckpointError(
                f"{source} was trained on observations {{{listed}}}; the env now gives "
                f"{{{describe_leaves(observation_space)}}}"
            )
    stored_actions = payload.get("action_sizes")
    if stored_actions is not None:
        trained_actions = stored_actions if isinstance(stored_actions, int) else tuple(stored_actions)
        if trained_actions != num_actions:
            raise CheckpointError(
                f"{source} was trained on actions of sizes {trained_actions}; the env now has {num_actions}"
            )


def upgrade_model_state(model: torch.nn.Module, state: dict[str, Any]) -> dict[str, Any]:
    """`state` (a checkpoint's "model") with the keys of the layout before the cores were submodules
    renamed to today's: a core's parts sat at the model's top (`lstm_input.weight`, `counter_unit.W`)
    and sit now under its slot (`cores.memory.lstm_input.weight`, `cores.count.counter_unit.W`).

    The weights of an event gate that a change counter carried unused (`cores.count.event_gate.*`,
    before `EventCounterCore.LEARNS_EVENTS`) are dropped where the model has no event gate. Keys the
    model has pass unchanged, so a current checkpoint comes back as it is.
    """
    current = model.state_dict().keys()
    moved = {key.split(".", 2)[2]: key for key in current if key.startswith("cores.") and key.count(".") >= 2}
    unused = _UNUSED_EVENT_GATE if not any(key.startswith(_UNUSED_EVENT_GATE) for key in current) else None
    return {
        (key if key in current else moved.get(key, key)): value
        for key, value in state.items()
        if unused is None or not key.startswith(unused)
    }


_UNUSED_EVENT_GATE = "cores.count.event_gate."


def load_agent(
    path: str | os.PathLike,
    device: str | torch.device = "cpu",
    allowed_imports: Iterable[str] = (),
    trust_imports: bool = False,
) -> tuple[torch.nn.Module, dict]:
    """Rebuild the trained ActorCritic of a checkpoint (in eval mode) and return it with its config.

    The config holds "agent" (the --agent name), "env_id" (TimeTrack when absent), "env" (the env's
    keyword arguments) and "imports" (the --import modules of the run, which register its user's
    core or env; an "env_id" written "module:Env-v0" names one more). A recorded module is imported
    only with consent, since importing runs its code: it must be among `allowed_imports` (the
    caller's --import modules), already imported by this process, or accepted with
    `trust_imports=True`; otherwise UnconsentedImportsError (an InputError) names it and nothing is
    imported. The model is built from the checkpoint's own "wiring", so it loads even after the
    registry has pointed its name elsewhere; checkpoints written without one
    are built from the registry's current wiring of "agent".
    """
    from nalu_rl.environment import RunEnvironment
    from nalu_rl.plugins import consented_imports, import_modules, recorded_modules

    payload = load_checkpoint(path, map_location=device)
    config = payload["config"]
    source = f"checkpoint {path}"
    recorded = recorded_modules(config, recorded_by=source)
    imports = consented_imports(recorded, allowed_imports, trust_imports, recorded_by=source)
    import_modules(imports, needed_by=source)
    try:
        with RunEnvironment.from_config(config) as environment:
            observation_space, num_actions = environment.spaces()
        check_spaces(payload, observation_space, num_actions, f"checkpoint {path}")
        model = build_model(
            config["agent"], observation_space, num_actions, payload.get("wiring"), payload.get("observation")
        )
        model.load_state_dict(upgrade_model_state(model, payload["model"]))
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"checkpoint {path} does not describe a known agent: {error}") from None
    return model.to(device).eval(), config


def shipped_checkpoint_names() -> list[str]:
    """The names of the shipped pretrained checkpoints (what `--agent NAME` of evaluate, render and
    counter accepts), sorted."""
    return sorted(path.stem for path in SHIPPED_FOLDER.glob("*.pt"))


def shipped_checkpoints_of(agent: str) -> list[str]:
    """The shipped checkpoints of `agent` (its name with one of `SHIPPED_SUFFIXES`), sorted."""
    names = {f"{agent}{suffix}" for suffix in SHIPPED_SUFFIXES}
    return [name for name in shipped_checkpoint_names() if name in names]


def shipped_checkpoint(name: str) -> Path:
    """The shipped pretrained checkpoint `name` (e.g. "nac" or "nac-pixels"); CheckpointError if none."""
    path = SHIPPED_FOLDER / f"{name}.pt"
    if path.is_file():
        return path
    shipped = shipped_checkpoint_names()
    available = f"; shipped: {', '.join(shipped)}" if shipped else "; none is shipped"
    raise CheckpointError(f"no shipped checkpoint {name!r}{available}")
