"""User modules named by `--import MODULE`: imported before anything is built, in the learner and in
every worker process, so that the cores, encoders, agents and environments they register exist.

A run records its modules in config.json and its checkpoint, so that loading the checkpoint in a
fresh process imports them again (`nalu_rl.checkpoint.load_agent`).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from nalu_rl.errors import InputError

IMPORT_FLAG = "--import"


def import_modules(names: Sequence[str], needed_by: str = "") -> None:
    """Import each module of `names`; InputError in one line for one that cannot be imported.

    `needed_by` names what asks for them (e.g. a checkpoint) in the error.
    """
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


def modules_in_argv(argv: Sequence[str]) -> list[str]:
    """The modules named by `--import MODULE` / `--import=MODULE` in a command line, in order."""
    names = []
    for index, argument in enumerate(argv):
        if argument == IMPORT_FLAG and index + 1 < len(argv):
            names.append(argv[index + 1])
        elif argument.startswith(IMPORT_FLAG + "="):
            names.append(argument.split("=", 1)[1])
    return names
