"""The errors a user can fix, raised by library code and printed by every command line as one line."""


class InputError(ValueError):
    """A problem the user can fix: an option value that cannot work, a missing or unreadable file.

    Command lines print it as `error: <message>` and exit with code 2 (`nalu_rl.cli.run_cli`).
    """


class CheckpointError(InputError):
    """A checkpoint that is missing, corrupt, not a nalu_rl checkpoint, or cannot be resumed."""


def one_line(text: str) -> str:
    """The first non-empty line of `text`, stripped ("" for none): an error message fit for one line."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")
