"""What every command line of the project shares: one-line errors and a non-zero exit."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


class CliError(Exception):
    """A problem the user can fix (bad option, missing file); printed as one line, exit code 2."""


def run_cli(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None) -> None:
    """Run `main(argv)` and exit with its code; user errors print one line to stderr, no traceback."""
    try:
        code = main(argv)
    except CliError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)
