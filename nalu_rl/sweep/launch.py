"""The first program of a trial's train process: `python launch.py PARENT_PID TRAIN ARGUMENTS...`.

Ray's processes block SIGINT, and a blocked or ignored signal stays so across exec: the program
unblocks it, so that train can save its checkpoint on SIGINT. On Linux it then has the kernel send
SIGINT to train when the trial's process dies (no orphan is left), and becomes `python -m
nalu_rl.train`. It is run by its path, not with -m, so that it starts without importing nalu_rl (and
torch) twice; it imports the standard library only.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence

PR_SET_PDEATHSIG = 1  # prctl option: the signal a process gets when its parent dies


def become_train(parent_pid: int, train_arguments: Sequence[str]) -> None:
    """Replace this process by `python -m nalu_rl.train TRAIN_ARGUMENTS`, stoppable by SIGINT and
    stopped when `parent_pid`, its parent, dies (exits with code 1 if that happened already)."""
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGINT))
        if os.getppid() != parent_pid:  # the parent died before the line above
            sys.exit(1)
    os.execv(sys.executable, [sys.executable, "-m", "nalu_rl.train", *train_arguments])


if __name__ == "__main__":
    become_train(int(sys.argv[1]), sys.argv[2:])
