"""What every command line of the project shares: one-line errors, and the options several commands take.

Library code raises `nalu_rl.errors.InputError` (or a subclass such as `CheckpointError`) for a
problem the user can fix; `run_cli` is the one place that turns it into `error: ...` and exit code 2.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nalu_rl.errors import InputError


class CliError(InputError):
    """A bad command-line option; printed as one line, exit code 2."""


def run_cli(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None) -> None:
    """Run `main(argv)` and exit with its code; user errors print one line to stderr, no traceback.

    Run on the process's own command line (`argv` None), the process ends with the command: a Ctrl-C
    once it has ended (a second one while it reports the first, or one during the interpreter's exit)
    is ignored, so the exit code stays the command's instead of death by SIGINT.
    """
    try:
        code = main(argv)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        _ignore_interrupts_if_ending(argv)
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        # The reader of stdout left (`| head`): no traceback, and no second error when the interpreter
        # flushes stdout on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    _ignore_interrupts_if_ending(argv)
    # Nothing is left to collect: the interpreter's shutdown then skips a collection of everything
    # torch created, which took 1.4-1.6 s on a loaded 2-core machine (0.35 s frozen).
    gc.freeze()
    sys.exit(code or 0)


def _ignore_interrupts_if_ending(argv: Sequence[str] | None) -> None:
    # A sweep's trial can get two SIGINTs, the terminal's and the sweep's: the second, arriving while
    # the first was reported, escaped as an uncaught KeyboardInterrupt and the process died by SIGINT.
    if argv is None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make `parser` raise CliError on a malformed option instead of printing its usage and exiting."""

    def raise_cli_error(message: str) -> None:
        raise CliError(message)

    parser.error = raise_cli_error  # type: ignore[method-assign]
    return parser


def parse_ranges(spec: str) -> list[int]:
    """Non-negative integers from ranges and lists such as "1-40", "5,8,12" or "0-2,7": in the order
    given, without repeats (the one parser of the delays and seeds options).

    Raises ValueError for a malformed part or a backward range ("4-0").
    """
    values: list[int] = []
    for part in spec.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if match is None:
            raise ValueError(f"bad range list {spec!r}")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise ValueError(f"bad range list {spec!r}: {first}-{last} runs backward")
        values.extend(value for value in range(first, last + 1) if value not in values)
    return values


def parse_delays(spec: str) -> list[int]:
    """Delays from a spec such as "1-40", "5,8,12" or "1-10,20,40": sorted, without repeats.

    Raises ValueError for a malformed spec or a delay below 1.
    """
    try:
        delays = parse_ranges(spec)
    except ValueError:
        raise ValueError(
            f"bad delay spec {spec!r}: expected ranges and lists like 1-40 or 1-10,20,40"
        ) from None
    if not delays or min(delays) < 1:
        raise ValueError(f"bad delay spec {spec!r}: delays must be integers >= 1")
    return sorted(delays)


def delays_and_episodes_options(delays_spec: str, episodes: int) -> list[int]:
    """The --delays and --episodes options of a command line, checked: bad ones raise CliError."""
    try:
        delays = parse_delays(delays_spec)
    except ValueError as error:
        raise CliError(str(error)) from None
    if episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {episodes}")
    return delays


def agent_names_help() -> str:
    """The agent names for a --help text, with a pointer to the table of `--list-agents`."""
    from nalu_rl.agents import agent_names

    return f"one of: {', '.join(agent_names())} (python -m nalu_rl.train --list-agents describes them)"


def add_import_option(
    parser: argparse.ArgumentParser,
    where: str = "a checkpoint's own modules are imported only when named here, or with --trust-imports",
) -> argparse.ArgumentParser:
    """Add `--import MODULE` (repeatable): a user's module imported before anything is built; `where`
    ends its help (what else happens to the modules)."""
    from nalu_rl.plugins import IMPORT_FLAG

    parser.add_argument(
        IMPORT_FLAG,
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module of yours to import first (repeatable), e.g. one that registers a core or an env; "
        + where,
    )
    return parser


def add_trust_imports_option(parser: argparse.ArgumentParser, what: str = "a checkpoint") -> None:
    """Add `--trust-imports`: import the modules that `what` records without naming each."""
    from nalu_rl.plugins import TRUST_IMPORTS_FLAG

    parser.add_argument(
        TRUST_IMPORTS_FLAG,
        action="store_true",
        help=f"import every module that {what} records (importing runs its code: only for files you "
        "trust); without it a recorded module must be named with --import",
    )


def add_checkpoint_options(parser: argparse.ArgumentParser, several: bool = False) -> argparse.ArgumentParser:
    """The options of the commands that load checkpoints (evaluate, render, counter): the checkpoint
    (--checkpoint PATH or --agent NAME of a shipped one; `several`: any number of both), --seed,
    --greedy, --import and --trust-imports."""
    if several:
        parser.add_argument("--checkpoint", nargs="+", metavar="PATH", help="checkpoint files or run folders")
        parser.add_argument("--agent", nargs="+", metavar="NAME", help=shipped_agent_help())
    else:
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--checkpoint", metavar="PATH", help="checkpoint file or run folder")
        source.add_argument("--agent", metavar="NAME", help=shipped_agent_help())
    parser.add_argument("--seed", type=int, default=0, help="seed of the episodes and of action sampling")
    parser.add_argument(
        "--greedy", action="store_true", help="take the most likely action instead of sampling"
    )
    add_import_option(parser)
    add_trust_imports_option(parser)
    return parser


def checkpoint_paths(args: argparse.Namespace) -> list[Path]:
    """The checkpoint files named by the parsed checkpoint options, shipped ones resolved, after
    importing the --import modules (InputError in one line if one fails)."""
    from nalu_rl.checkpoint import shipped_checkpoint
    from nalu_rl.plugins import import_modules

    import_modules(args.imports)
    checkpoints = [args.checkpoint] if isinstance(args.checkpoint, str) else args.checkpoint or []
    agents = [args.agent] if isinstance(args.agent, str) else args.agent or []
    paths = [Path(path) for path in checkpoints] + [shipped_checkpoint(agent) for agent in agents]
    if not paths:
        raise CliError("give --checkpoint PATH or --agent NAME")
    return paths


def load_checkpoint_option(
    args: argparse.Namespace, path: Path, device: str = "cpu"
) -> tuple[Any, dict[str, Any]]:
    """The model and config of checkpoint `path`, importing only the recorded modules that the parsed
    options consent to (--import, --trust-imports); see `nalu_rl.checkpoint.load_agent`."""
    from nalu_rl.checkpoint import load_agent

    return load_agent(path, device, allowed_imports=args.imports, trust_imports=args.trust_imports)


def shipped_agent_help() -> str:
    """The --agent help of the commands that load a shipped pretrained checkpoint."""
    from nalu_rl.checkpoint import shipped_checkpoint_names

    names = ", ".join(shipped_checkpoint_names()) or "none"
    return f"a shipped pretrained checkpoint: {names}"


def writable_folder(path: str | os.PathLike) -> Path:
    """Create `path` if needed and check that files can be written in it (CliError otherwise)."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise CliError(f"cannot write to {folder}: {error.strerror or error}") from None
    return folder
