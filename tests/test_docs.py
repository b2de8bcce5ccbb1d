"""The docs point at things that exist: every link and repository path in README.md and docs/."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

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


def load_link_checker():
    path = REPOSITORY / "scripts" / "check_doc_links.py"
    spec = importlib.util.spec_from_file_location("check_doc_links", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("python scripts/count_weights.py runs/interval-timing/signed-count-seed*/model.pt", True),
        ("python scripts/count_weights.py runs/interval-timing/signed-count-seed*/checkpoint.pt", False),
        ("see runs/sweeps/symbolic/{lstm,nac}-symbolic-seed*/success_by_delay.csv", False),
        ("the folder runs/probe-lag/lag4-lr3.5e-4-seed0 holds it", False),
        ("runs/nac-symbolic-0-<time>/events.out.tfevents.123 and runs/x/weights.npz", True),
    ],
)
def test_the_link_checker_refuses_a_runs_path_to_a_file_no_run_writes(line: str, flagged: bool) -> None:
    missing = load_link_checker().missing_paths(REPOSITORY / "README.md", line)
    assert bool(missing) == flagged, missing


def test_the_link_checkers_run_files_are_the_names_the_code_writes() -> None:
    from nalu_rl import evaluation
    from nalu_rl.runtime import run, status
    from nalu_rl.sweep import folder, plan

    written = {
        "checkpoint.pt",
        run.BEST_CHECKPOINT,
        "config.json",
        status.RUN_STATUS_FILE,
        evaluation.CSV_NAME,
        evaluation.PNG_NAME,
        evaluation.CSV_NAME.replace(".csv", ".md"),
        plan.SWEEP_FILE,
        folder.TRIAL_STATUS_FILE,
        folder.TRAIN_LOG_FILE,
        folder.TRAIN_PID_FILE,
    }
    assert written <= set(load_link_checker().RUN_FILES)
