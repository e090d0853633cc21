"""No process outlives the batch: the batch adopts its orphans and waits for every one to be gone.

A grader process that is killed (it did not stop within its grace period) leaves its worker
server and the server's sandboxed children behind; they end by themselves once they see their
socket close, but a little later, on a busy machine seconds later. So the batch makes itself the
*child subreaper* of its tree (``PR_SET_CHILD_SUBREAPER``): an orphaned descendant is re-parented
to the batch instead of to init, and ``reap_descendants`` waits for each, kills what is still
there after a grace period, and reaps it, until the batch has no child left. Only then does
``grade-all`` exit, so "a stopped run leaves no process" holds the moment it returns.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
ORPHAN_GRACE_SECONDS = 10.0  # an orphaned server notices its closed socket and kills its children by then


def adopt_orphans(on: bool = True) -> bool:
    """Make this process the subreaper of its descendants (``on``), or stop being one; False where the
    kernel refuses (then orphans go to init, as before)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def children(pid: int | None = None) -> list[int]:
    """The live (or unreaped) children of ``pid`` (this process by default), from /proc."""
    me = os.getpid() if pid is None else pid
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me:
            found.append(int(entry.name))
    return found


def reap_descendants(keep: set[int], grace: float = ORPHAN_GRACE_SECONDS) -> list[int]:
    """Wait for every child of this process but ``keep`` to exit (and for the orphans that are re-parented
    here as their parents exit), SIGKILL those still there after ``grace`` seconds, and reap them all.
    Returns the pids that had to be killed."""
    deadline = time.monotonic() + grace
    killed: list[int] = []
    while pending := [p for p in children() if p not in keep]:
        for pid in pending:
            if time.monotonic() > deadline:
                _kill(pid)
                killed.append(pid)
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid  # reaped elsewhere (multiprocessing's own join)
            if done:
                keep.discard(pid)
        time.sleep(0.02)
    return killed


def _kill(pid: int) -> None:
    for send in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            send()
        except (ProcessLookupError, PermissionError):
            pass
