"""Worker processes: one pool that both runtimes use, and the settings every worker process gets.

Each worker talks to the parent over its own duplex pipe, so a worker killed at any moment takes
nothing shared down with it: the pool notices, closes that pipe and starts a successor on a fresh one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

import torch

# glibc's mallopt parameters (malloc.h).
_M_MXFAST = 1
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def retain_freed_memory() -> bool:
    """Make this process's C allocator reuse freed memory instead of handing it back to the operating
    system; True when it applied (glibc), False elsewhere (nothing changes)."""
    # Every learner update allocates and frees the same large tensors (a pixel batch in float32 is
    # ~100 MB, a sequence of LSTM gates 5 MB). By default glibc maps large blocks with mmap and
    # unmaps them on free, and torch's 64-byte-aligned blocks leave a small leading fragment in a
    # fast bin that keeps a freed block from merging back, so the next block lands on fresh pages:
    # every update page-faulted its memory in again (on the shared VMs measured, an 8 MB fill took
    # 5-13 ms on fresh pages, 0.5-1.5 ms on reused ones). Without mmap, fast bins or trimming, the
    # heap settles at the update's peak and is reused.
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    settings = ((_M_MMAP_MAX, 0), (_M_MXFAST, 0), (_M_TRIM_THRESHOLD, 2**31 - 1))
    return all([bool(mallopt(parameter, value)) for parameter, value in settings])


def prepare_worker_process() -> None:
    """Settings of every worker process (actors, hogwild workers): one thread, Ctrl-C left to the parent."""
    # The parent decides when to stop (Ctrl-C reaches the whole process group): a child must not
    # die half-way through writing a buffer.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)


class WorkerPool:
    """`count` worker processes, each linked to the parent by a private duplex pipe.

    `worker_args(worker_id, link)` gives the arguments of `target` for a worker (its end of the pipe
    among them); it is called again for each successor of a dead worker. `on_start(worker_id)` runs
    after each (re)start, for example to hand a successor the work its predecessor held.
    """

    def __init__(
        self,
        context: Any,
        count: int,
        target: Callable[..., None],
        worker_args: Callable[[int, Connection], tuple[Any, ...]],
        name: str,
        on_start: Callable[[int], None] | None = None,
    ) -> None:
        self.context = context
        self.target = target
        self.worker_args = worker_args
        self.name = name
        self.on_start = on_start
        self.stop = context.Event()
        self.processes: list[Any] = [None] * count
        self.links: list[Connection | None] = [None] * count
        self.restarts = 0

    def __len__(self) -> int:
        return len(self.processes)

    def start_all(self) -> None:
        """Start every worker."""
        for worker_id in range(len(self.processes)):
            self._start(worker_id)

    def _start(self, worker_id: int) -> None:
        parent_end, worker_end = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=self.target,
            args=self.worker_args(worker_id, worker_end),
            name=f"{self.name}-{worker_id}",
            daemon=True,
        )
        process.start()
        worker_end.close()
        self.processes[worker_id] = process
        self.links[worker_id] = parent_end
        if self.on_start is not None:
            self.on_start(worker_id)

    def send(self, worker_id: int, message: Any) -> bool:
        """Send `message` to a worker; False when its pipe is closed (it died, or is dying, and
        `replace_dead` will start a successor)."""
        link = self.links[worker_id]
        if link is None:
            return False
        try:
            link.send(message)
        except (BrokenPipeError, OSError):
            return False
        return True

    def receive(self, timeout: float) -> list[tuple[int, Any]]:
        """(worker id, message) of everything the workers sent since the last call, waiting up to
        `timeout` seconds for the first; a worker whose pipe closed is marked for replacement."""
        ready = wait([link for link in self.links if link is not None], timeout)
        messages = []
        for worker_id, link in enumerate(self.links):
            if link is None or link not in ready:
                continue
            messages.extend((worker_id, message) for message in self._drain(worker_id))
        return messages

    def _drain(self, worker_id: int) -> list[Any]:
        link = self.links[worker_id]
        messages = []
        try:
            while link is not None and link.poll():
                messages.append(link.recv())
        except (EOFError, OSError):
            link.close()
            self.links[worker_id] = None
        return messages

    def replace_dead(self) -> int:
        """Restart every worker that has died; return how many were restarted."""
        restarted = 0
        for worker_id, process in enumerate(self.processes):
            if process is None or process.is_alive():
                continue
            process.join(timeout=0)
            link = self.links[worker_id]
            if link is not None:
                link.close()
            self._start(worker_id)
            restarted += 1
        self.restarts += restarted
        return restarted

    def close(
        self, timeout: float, goodbye: Any = None, last_messages: Callable[[Any], None] | None = None
    ) -> None:
        """Stop every worker: set the stop event, send `goodbye`, wait up to `timeout` seconds, then
        terminate and kill what is left. Messages still in the pipes go to `last_messages`."""
        self.stop.set()
        for worker_id in range(len(self.processes)):
            self.send(worker_id, goodbye)
        deadline = time.monotonic() + timeout
        for worker_id, process in enumerate(self.processes):
            if process is not None:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
            if last_messages is not None:
                for message in self._drain(worker_id):
                    last_messages(message)
        for process in self.processes:
            if process is None:
                continue
            if process.is_alive():
                process.terminate()
                process.join(timeout=0.5)
            if process.is_alive():
                process.kill()
                process.join()
        for link in self.links:
            if link is not None:
                with contextlib.suppress(OSError):
                    link.close()
