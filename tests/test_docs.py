"""The docs point at things that exist: every link and repository path in README.md and docs/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def test_every_link_and_path_in_the_docs_exists() -> None:
    result = subprocess.run(
        [sys.executable, str(REPOSITORY / "scripts" / "check_doc_links.py")],
        capture_output=True, text=True, cwd=REPOSITORY, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("0 missing path(s)")


def test_the_example_core_is_short() -> None:
    lines = (REPOSITORY / "examples" / "custom_core.py").read_text().splitlines()
    assert len(lines) < 60
