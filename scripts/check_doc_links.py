"""Check that every link and every repository path in the README and docs/ names a file that exists.

Reads README.md and every docs/**/*.md. A Markdown link `[text](target)` that is not a URL must
resolve from the file that holds it; a path written in the text or in a command (a word starting
with docs/, figures/, scripts/, nalu_rl/, envs/, agents/ or tests/) must exist from the
repository root (figures/ from docs/; nalu_rl/envs/ and nalu_rl/agents/, the installed names, as
envs/ and agents/; Gymnasium ids such as nalu_rl/TimeTrack-v0 are not paths), after expanding
`{a,b}` and matching `*` as a glob. Paths with a placeholder (`<k>`, `$k`, `NAME`, ...) are
checked up to the placeholder's folder. A path under runs/ (a run's or a sweep's folder, never
committed) is not looked up, but a file it ends in must be one that a run, a sweep or an evaluation
writes there (`RUN_FILES`: checkpoint.pt, not model.pt). Prints each missing path or wrong file
name with its file and line, and exits 1 if there is one.
    python scripts/check_doc_links.py                      # from the repository root
    python scripts/check_doc_links.py --allow-missing docs/EXTENDING.md
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import re
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
PATH = re.compile(r"(?<![\w/.-])((?:docs|figures|scripts|nalu_rl|envs|agents|tests|journal)/[\w./*{},<>$-]*)")
PLACEHOLDER = re.compile(r"[<$]|\bNAME\b|\.\.\.")
FILE_NAME = re.compile(r"\.(?:[A-Za-z][A-Za-z0-9]{0,7}|\*)$|\.tfevents\.")
RUN_PATH = re.compile(r"(?<![\w/.-])(runs/[\w./*{},<>$-]*)")
# The files a run folder (or a sweep's, or an evaluation's --out inside one) holds, by the constants
# that name them: checkpoint.pt and best.pt (nalu_rl/runtime/run.py BEST_CHECKPOINT), config.json
# (nalu_rl/train.py), run_status.json (runtime/status.py RUN_STATUS_FILE), success_by_delay.{csv,png}
# (evaluation.py CSV_NAME, PNG_NAME), success_by_delay.md (sweep/report.py), sweep.json
# (sweep/plan.py SWEEP_FILE), sweep_trial.json, train.log, train.pid (sweep/folder.py), evaluate.log
# (scripts/experiments/interval_timing_runs.sh), TensorBoard's events.out.tfevents.*.
# tests/test_docs.py checks the list against those constants.
RUN_FILES = (
    "checkpoint.pt",
    "best.pt",
    "config.json",
    "run_status.json",
    "success_by_delay.csv",
    "success_by_delay.png",
    "success_by_delay.md",
    "sweep.json",
    "sweep_trial.json",
    "train.log",
    "train.pid",
    "evaluate.log",
    "events.out.tfevents.*",
)


def expand_braces(path: str) -> list[str]:
    """`a/{b,c}/d` -> [`a/b/d`, `a/c/d`], recursively."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [expanded for part in match.group(1).split(",") for expanded in expand_braces(head + part + tail)]


def exists(candidate: Path) -> bool:
    """Whether `candidate` names a file or folder, `*` matching as a glob."""
    return bool(glob.glob(str(candidate))) if "*" in str(candidate) else candidate.exists()


def names_a_run_file(path: str) -> bool:
    """Whether the runs/ path `path` ends in a folder, a pattern, or a file that a run writes."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if not FILE_NAME.search(name) or PLACEHOLDER.search(name):
        return True  # a folder (lr3.5e-4-seed0 is one), or a name left open
    patterns = [expanded for pattern in RUN_FILES for expanded in expand_braces(pattern)]
    return any(
        fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(pattern, candidate)
        for candidate in expand_braces(name)
        for pattern in patterns
    )


def missing_paths(document: Path, text: str) -> list[tuple[int, str]]:
    """(line, path) of each link or repository path in `text` that does not exist, and of each
    runs/ path whose file is none that a run writes."""
    missing: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for raw in RUN_PATH.findall(line):
            path = raw.rstrip(".,;:)")
            if not names_a_run_file(path):
                missing.append((number, f"{path} (no run writes that file; a run's: {', '.join(RUN_FILES)})"))
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (document.parent / target.split("#")[0]).exists():
                missing.append((number, target))
        for raw in PATH.findall(line):
            path = raw.rstrip(".,;:)")
            if not path or path.endswith("/..."):
                continue
            if PLACEHOLDER.search(path):
                path = path[: PLACEHOLDER.search(path).start()].rsplit("/", 1)[0]
            if path.startswith("runs/") or "/" not in path or re.match(r"nalu_rl/\w+-v\d+$", path):
                continue  # a run's folder, or a Gymnasium id such as nalu_rl/TimeTrack-v0
            # nalu_rl.envs and nalu_rl.agents are the folders envs/ and agents/ of the checkout.
            path = re.sub(r"^nalu_rl/(envs|agents)/", r"\1/", path)
            # figures/ and journal/ are written from docs/; a run's own folders are not files.
            base = REPOSITORY / "docs" if path.startswith(("figures/", "journal/")) else REPOSITORY
            for expanded in expand_braces(path):
                if not exists(base / expanded) and not exists(document.parent / expanded):
                    missing.append((number, expanded))
    return list(dict.fromkeys(missing))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--allow-missing", nargs="*", default=[], help="paths that may be missing (planned files)"
    )
    args = parser.parse_args(argv)
    allowed = {Path(path).name for path in args.allow_missing} | set(args.allow_missing)
    documents = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
    count = 0
    for document in documents:
        for number, path in missing_paths(document, document.read_text()):
            if path in allowed or Path(path).name in allowed:
                continue
            count += 1
            print(f"{document.relative_to(REPOSITORY)}:{number}: {path}")
    print(f"{count} missing path(s) in {len(documents)} documents")
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
