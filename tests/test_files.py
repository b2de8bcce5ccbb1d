"""Atomic replacement of the files other programs read while a run writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from nalu_rl.files import replace_atomically, write_text_atomically


def test_written_text_replaces_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "status.json"
    write_text_atomically(path, "old\n")
    write_text_atomically(path, "new\n")
    assert path.read_text() == "new\n"
    assert sorted(entry.name for entry in path.parent.iterdir()) == ["status.json"]


def test_a_write_that_fails_half_way_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"complete old file")

    def write_then_fail(file) -> None:
        file.write(b"half of a new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(path, write_then_fail)
    assert path.read_bytes() == b"complete old file"
    assert [entry.name for entry in tmp_path.iterdir()] == ["checkpoint.pt"]
