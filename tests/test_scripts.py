"""scripts/: each user tool answers --help with a whole sentence, refuses a bad input with exit 2 and is
named in docs/USAGE.md; each driver of one result in scripts/experiments/ names the docs section it makes."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
SCRIPTS = REPOSITORY / "scripts"
EXPERIMENTS = SCRIPTS / "experiments"

# Every user tool in scripts/ with an input it must refuse (argparse's exit 2, before any work).
TOOL_BAD_INPUTS = {
    "bench_agents.py": ["--agents", "no-such-agent"],
    "bench_arithmetic.py": ["--seeds", "many"],
    "bench_env.py": ["--seconds", "long"],
    "bench_task_throughput.py": ["--steps", "many"],
    "bench_train.py": ["--modes", "no-such-mode"],
    "check_doc_links.py": ["--no-such-option"],
    "count_weights.py": [],
    "curve_table.py": [],
    "learned_count_exactness.py": [],
    "measure_stop_latency.py": ["--repeats", "many"],
    "outcomes_by_delay.py": [],
    "popgym_scorecard.py": [],
    "race_recurrent_ppo.py": ["--envs", "no-such-env"],
    "repeat_training.py": ["--repeats", "many"],
    "rerun_within_intervals.py": [],
    "scalars_csv.py": [],
    "seed_table.py": [],
    "ship_checkpoints.py": [],
}
SHELL_TOOLS = ["compare_shipped_checkpoints.sh", "device_check.sh"]

# Runs each script's main in one interpreter (torch imported once), catching its exit.
RUNNER = """
import contextlib, io, json, runpy, sys
results = []
for path, args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    sys.argv = [path, *args]
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def tool_answers() -> dict[tuple[str, str], tuple[int, str, str]]:
    """(script, "help" or "bad") -> (exit code, stdout, stderr) of every user tool."""
    calls = []
    for name, bad in TOOL_BAD_INPUTS.items():
        calls.append([str(SCRIPTS / name), ["--help"]])
        calls.append([str(SCRIPTS / name), bad])
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(calls)],
        capture_output=True, text=True, cwd=REPOSITORY, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    keys = [(name, kind) for name in TOOL_BAD_INPUTS for kind in ("help", "bad")]
    return dict(zip(keys, answers, strict=True))


def test_every_script_is_a_listed_tool_or_an_experiment() -> None:
    top_level = {path.name for path in SCRIPTS.iterdir() if path.suffix in {".py", ".sh"}}
    assert top_level == set(TOOL_BAD_INPUTS) | set(SHELL_TOOLS)


def help_description(help_text: str) -> str:
    """The paragraph of an argparse --help between the usage and the first argument group."""
    paragraphs = help_text.split("\n\n")
    return " ".join(paragraphs[1].split()) if len(paragraphs) > 1 else ""


@pytest.mark.parametrize("name", sorted(TOOL_BAD_INPUTS))
def test_a_tools_help_is_a_whole_sentence(name: str, tool_answers) -> None:
    code, out, err = tool_answers[(name, "help")]
    assert code == 0, err
    description = help_description(out)
    assert re.fullmatch(r"[A-Z`].*[.?!]\)?", description), description


@pytest.mark.parametrize("name", sorted(TOOL_BAD_INPUTS))
def test_a_tool_refuses_a_bad_input_with_exit_2(name: str, tool_answers) -> None:
    code, _, err = tool_answers[(name, "bad")]
    assert code == 2, err
    assert "Traceback" not in err


def test_compare_shipped_checkpoints_has_help_and_refuses_missing_interpreters() -> None:
    script = str(SCRIPTS / "compare_shipped_checkpoints.sh")
    shown = subprocess.run(["bash", script, "--help"], capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0
    assert "byte for byte." in shown.stdout
    refused = subprocess.run(["bash", script, sys.executable], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2
    assert "OLD_PYTHON and NEW_PYTHON" in refused.stderr


@pytest.mark.parametrize("name", sorted([*TOOL_BAD_INPUTS, *SHELL_TOOLS]))
def test_every_tool_is_named_in_the_usage_page(name: str) -> None:
    assert f"scripts/{name}" in (REPOSITORY / "docs" / "USAGE.md").read_text()


def first_line(path: Path) -> str:
    """A Python script's docstring's first line, or a shell script's first comment after the shebang."""
    if path.suffix == ".py":
        return ast.get_docstring(ast.parse(path.read_text())).splitlines()[0]
    return path.read_text().splitlines()[1].removeprefix("# ")


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.[ps][yh]")), ids=lambda path: path.name)
def test_an_experiment_names_the_docs_section_it_makes(path: Path) -> None:
    match = re.fullmatch(r'Makes (docs/[\w./-]+\.md), "(.+)"\.', first_line(path))
    assert match, first_line(path)
    document, heading = match.groups()
    headings = [
        line.lstrip("#").strip()
        for line in (REPOSITORY / document).read_text().splitlines()
        if line.startswith("#")
    ]
    assert any(line.startswith(heading.removesuffix("...")) for line in headings), (document, heading)
