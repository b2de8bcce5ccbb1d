"""Files that other programs may read at any moment (checkpoints, run and trial status, config.json):
each is replaced whole, so a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def replace_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Let `write` fill a temporary file beside `path`, flush it to disk, then rename it over `path`.

    The folder is created if missing; on any failure (Ctrl-C included) the temporary file is removed
    and `path` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """Replace the file at `path` with `text` (UTF-8) atomically."""
    replace_atomically(path, lambda file: file.write(text.encode("utf-8")))
