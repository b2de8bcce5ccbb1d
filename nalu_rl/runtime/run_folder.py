"""The run folder a training run writes into: created and checked writable for a new run, or read back
for `--resume` (the saved config, kept where it defines the task or the model, and the checkpoint)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.config import Config, validate
from nalu_rl.errors import InputError
from nalu_rl.plugins import consented_imports, recorded_modules

# Options that define the model or the task; a resumed run keeps the saved ones.
FIXED_ON_RESUME = (
    "agent",
    "env_id",
    "extra_env_kwargs",
    "imports",
    "obs",
    "size",
    "delay_range",
    "stimulus",
    "reward_mode",
    "seed",
    "envs_per_actor",
)
# The name `parse_config` puts among the explicit options when --trust-imports is given: consent
# for this command only, never a setting of the run.
TRUST_IMPORTS = "trust_imports"


def open_run_folder(config: Config, explicit_options: set[str]) -> tuple[Config, Path, dict[str, Any] | None]:
    """The config a run trains with, its folder (created and checked writable), and the checkpoint
    payload it resumes from (None for a new run).

    With `config.resume`, the saved config is kept, overridden only by the options named in
    `explicit_options` that may change on resume. The modules the saved run records are imported only
    when named again with --import or accepted with --trust-imports (`TRUST_IMPORTS` among
    `explicit_options`). Raises InputError (or CheckpointError) for options that cannot work, modules
    not consented to, a folder that is not writable, or a folder that already holds a run.
    """
    payload = None
    if config.resume is not None:
        path = Path(config.resume) / "checkpoint.pt"
        payload = load_checkpoint(path)
        # The saved run's modules are imported (by validate, below) only with this command's consent.
        named = config.imports if "imports" in explicit_options else []
        source = f"checkpoint {path}"
        recorded = recorded_modules(payload["config"], recorded_by=source)
        consented_imports(recorded, named, TRUST_IMPORTS in explicit_options, recorded_by=source)
        saved = Config.from_dict(payload["config"])
        changed = [
            name
            for name in FIXED_ON_RESUME
            if name in explicit_options and getattr(config, name) != getattr(saved, name)
        ]
        if changed:
            raise InputError(
                f"--resume keeps the run's {', '.join('--' + n.replace('_', '-') for n in changed)}"
            )
        overrides = {
            name: getattr(config, name)
            for name in explicit_options
            if name not in FIXED_ON_RESUME and name != TRUST_IMPORTS
        }
        config = Config.from_dict(
            {**saved.to_dict(), **overrides, "resume": config.resume, "logdir": config.resume}
        )
    validate(config)
    if config.logdir is None:
        config.logdir = config.default_logdir()
    logdir = Path(config.logdir)
    if config.resume is None and (logdir / "checkpoint.pt").exists():
        raise InputError(
            f"run folder {logdir} already holds a checkpoint; continue it with --resume {logdir} "
            "or choose another --logdir"
        )
    try:
        logdir.mkdir(parents=True, exist_ok=True)
        probe = logdir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise InputError(f"cannot write to log folder {logdir}: {error.strerror or error}") from None
    return config, logdir, payload
