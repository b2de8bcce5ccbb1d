"""User modules named by `--import MODULE`: imported before anything is built, in the learner and in
every worker process, so that the cores, encoders, agents and environments they register exist.

A run records its modules in config.json and its checkpoint (`"imports"`), so that the checkpoint
says what it needs. Importing a module runs its code, so a recorded module is imported only with
the user's consent: named again with `--import` on the command that loads the checkpoint, or all of
them accepted with `--trust-imports` (`consented_imports`; the convention of Hugging Face's
`trust_remote_code`). A checkpoint alone never runs code.
"""

from __future__ import annotations

import importlib
import site
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nalu_rl.errors import InputError

IMPORT_FLAG = "--import"
TRUST_IMPORTS_FLAG = "--trust-imports"


class UnconsentedImportsError(InputError):
    """Something the user loads records modules they did not name; `modules` lists them."""

    def __init__(self, message: str, modules: Sequence[str]) -> None:
        super().__init__(message)
        self.modules = list(modules)


def check_module_name(name: object, recorded_by: str = "") -> str:
    """`name` if it is a dotted Python identifier (e.g. "custom_core" or "my_lab.envs"); InputError in
    one line for anything else (a path, "..", whitespace, an empty part), before anything is imported."""
    if isinstance(name, str) and name and all(part.isidentifier() for part in name.split(".")):
        return name
    source = f" recorded by {recorded_by}" if recorded_by else ""
    raise InputError(
        f"module name {name!r}{source} is not a dotted Python identifier (such as custom_core or "
        "my_lab.envs); refused, nothing was imported"
    )


def import_modules(names: Sequence[str], needed_by: str = "") -> None:
    """Import each module of `names`; InputError in one line for one that cannot be imported or whose
    name is not a dotted Python identifier.

    `needed_by` names what asks for them (e.g. a checkpoint) in the error.
    """
    for name in names:
        check_module_name(name, needed_by)
    for name in names:
        asker = f" (needed by {needed_by})" if needed_by else ""
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name and (name == error.name or name.startswith(error.name + ".")):
                raise InputError(
                    f"cannot import module {name!r}{asker}: no such module on the path; run from its "
                    "folder or add that folder to PYTHONPATH"
                ) from None
            raise InputError(f"module {name!r}{asker} failed to import: {error}") from None
        except Exception as error:  # a user module may raise anything while it registers its parts
            raise InputError(
                f"module {name!r}{asker} failed to import: {type(error).__name__}: {error}"
            ) from None


def consented_imports(
    recorded: object, named: Iterable[str] = (), trust: bool = False, recorded_by: str = "a checkpoint"
) -> list[str]:
    """The modules that something loaded (a checkpoint, a sweep) records, checked and consented to:
    each must be a dotted Python identifier, and either named by the user (`named`: this command's
    `--import` modules), already imported by this process (importing it again runs nothing), or
    accepted with `trust`.

    Raises InputError for a malformed list or name, and UnconsentedImportsError (one line naming the
    modules and the two ways on) for modules the user did not name; nothing is imported here.
    """
    if recorded is None:
        return []
    if not isinstance(recorded, list):
        raise InputError(f"{recorded_by} has a malformed list of --import modules: {recorded!r}")
    names = [check_module_name(name, recorded_by) for name in recorded]
    allowed = set(named)
    unnamed = [name for name in names if name not in allowed and name not in sys.modules]
    if unnamed and not trust:
        flags = " ".join(f"{IMPORT_FLAG} {name}" for name in unnamed)
        raise UnconsentedImportsError(
            f"{recorded_by} records {'modules' if len(unnamed) > 1 else 'module'} {', '.join(unnamed)} "
            f"to import, which would run {'their' if len(unnamed) > 1 else 'its'} code; nothing was "
            f"imported: if you trust {'them' if len(unnamed) > 1 else 'it'}, give {flags}, or "
            f"{TRUST_IMPORTS_FLAG} to accept the recorded list",
            unnamed,
        )
    return names


def recorded_modules(config: Mapping[str, Any], recorded_by: str = "a checkpoint") -> list[Any]:
    """The modules that a run's stored config would import: its "imports", then the module of an env
    id written "module:Env-v0" (Gymnasium imports that module when it looks the id up). Unchecked: pass
    them to `consented_imports`. InputError for an "imports" that is not a list."""
    imports = config.get("imports") or []
    if not isinstance(imports, list):
        raise InputError(f"{recorded_by} has a malformed list of --import modules: {imports!r}")
    env_id = config.get("env_id")
    env_module = env_id.split(":")[0] if isinstance(env_id, str) and ":" in env_id else None
    return [*imports, *([env_module] if env_module is not None and env_module not in imports else [])]


def modules_in_argv(argv: Sequence[str]) -> list[str]:
    """The modules named by `--import MODULE` / `--import=MODULE` in a command line, in order."""
    names = []
    for index, argument in enumerate(argv):
        if argument == IMPORT_FLAG and index + 1 < len(argv):
            names.append(argv[index + 1])
        elif argument.startswith(IMPORT_FLAG + "="):
            names.append(argument.split("=", 1)[1])
    return names


def module_folder(name: str) -> Path | None:
    """The folder from which the imported module `name` was found (the folder that holds its top-level
    module or package), as an absolute path; None for a module without a file (built in, frozen) and
    for one installed where every interpreter looks (the standard library, site-packages)."""
    top = sys.modules.get(name.split(".")[0]) or importlib.import_module(name.split(".")[0])
    locations = list(getattr(top, "__path__", []) or [])
    file = getattr(top, "__file__", None)
    if locations:  # a package (a namespace package has no __file__): its folder's parent
        folder = Path(locations[0]).resolve().parent
    elif file:
        folder = Path(file).resolve().parent
    else:
        return None
    return None if folder in _installed_folders() else folder


def _installed_folders() -> set[Path]:
    paths = sysconfig.get_paths()
    folders = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths]
    folders += [*site.getsitepackages(), site.getusersitepackages()]
    return {Path(folder).resolve() for folder in folders}


def module_folders(names: Sequence[str]) -> list[str]:
    """The folders of the imported modules `names` (see `module_folder`), without repeats, in order."""
    folders: list[str] = []
    for name in names:
        folder = module_folder(name)
        if folder is not None and str(folder) not in folders:
            folders.append(str(folder))
    return folders
