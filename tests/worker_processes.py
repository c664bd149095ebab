"""What the conversion tests ask of rag.convert_worker's processes: whether one is gone, and which one took a file.

A process that is gone is checked with os.kill(pid, 0) (signal 0 sends nothing, it only asks), because a
SIGKILLed worker the caller has reaped no longer exists at all."""
from __future__ import annotations

import os
import time

from rag import convert_worker


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def busy_pid(within_s: float = 30) -> int:
    """The pid of the worker converting a file now, once one has taken it (a conversion just started in a thread)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        pids = convert_worker.running_pids()
        if pids:
            return pids[0]
        time.sleep(0.01)
    raise AssertionError("no worker took the file")
