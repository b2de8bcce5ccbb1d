"""What a command that runs trials through Ray (`sweep`, `bench`) needs around them: the Ray
backend, imported only when asked for (a clear error when Ray is missing), and stop requests from
SIGINT and SIGTERM."""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from nalu_rl.cli import CliError

RAY_MISSING = "Ray is not installed; install with `pip install -e .[cluster]`"


def load_ray_backend() -> ModuleType:
    """The Ray Tune backend (nalu_rl.sweep.ray_backend); CliError when Ray is not installed."""
    if importlib.util.find_spec("ray") is None:
        raise CliError(RAY_MISSING)
    from nalu_rl.sweep import ray_backend

    return ray_backend


@contextlib.contextmanager
def stop_requests() -> Iterator[Callable[[], bool]]:
    """Within the block, SIGINT and SIGTERM ask the trials to stop (the yielded function says whether
    one came); a second one stops at once."""
    received: list[int] = []
    previous: dict[int, Any] = {}

    def request_stop(signum: int, _frame: Any) -> None:
        received.append(signum)
        print(
            f"stopping: {signal.Signals(signum).name} received; every trial saves its checkpoint "
            "(send it again to stop at once)",
            file=sys.stderr,
            flush=True,
        )
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, request_stop)
    try:
        yield lambda: bool(received)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
