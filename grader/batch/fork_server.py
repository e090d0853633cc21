"""The fork server every grader process of a batch is forked from (the zygote): start it, stop it.

Its start is what a small class waits for longest: the zygote imports torch (``grader.batch.zygote``)
before the first grader process can exist. So ``grade-all`` starts it first thing, before it reads the
config and the submissions, and those run beside the import, on the other core; the pool then finds it
running. This module imports only the standard library, so that start comes ~0.2 s after the command's.

Where the batch grades nothing after all (every file unchanged, a refused input), ``stop_zygote(kill=True)``
ends the import at once instead of waiting for it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Iterator

ZYGOTE = "grader.batch.zygote"  # what the fork server imports before it forks a grader process (read at each start)
SOCKET_PATH_MAX = 100  # bytes of a Unix socket's path, with room to spare (the kernel's limit: 107)


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """SIGINT and SIGTERM blocked in this thread meanwhile: a process started now inherits the mask."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def start_zygote(module: str | None = None) -> None:
    """Start the fork server, importing ``module`` (``ZYGOTE``), unless one runs already (then nothing happens).

    It starts in the background (the first ``Process.start`` waits for it) and is born with SIGINT and
    SIGTERM blocked, as every grader process forked from it then is: a Ctrl-C while one boots must not
    kill it with a traceback (``pool.grader_process`` unblocks them once its handlers are in place).
    """
    multiprocessing.get_context("forkserver").set_forkserver_preload([module or ZYGOTE])
    from multiprocessing import forkserver

    with signals_blocked(), _socket_folder_short_enough():
        forkserver.ensure_running()


@contextlib.contextmanager
def _socket_folder_short_enough() -> Iterator[None]:
    """Python 3.11 binds the fork server's socket at ``$TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX`` (3.12 uses
    an abstract name), and a socket's path holds at most 107 bytes: under a long ``$TMPDIR`` (a CI job's,
    a test's) the server would fail to start. Then, and only then, its folder goes to the shortest
    writable system temp folder instead; it goes with the server (``_remove_socket_folder``)."""
    from multiprocessing import util

    if len(tempfile.gettempdir()) + len("/pymp-XXXXXXXX/listener-XXXXXXXX") < SOCKET_PATH_MAX:
        yield
        return
    short = next((d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.access(d, os.W_OK | os.X_OK)), None)
    before = tempfile.tempdir
    tempfile.tempdir = short or before
    try:
        util.get_temp_dir()  # made now, under the short folder
        yield
    finally:
        tempfile.tempdir = before


def stop_zygote(kill: bool = False) -> None:
    """Close the fork server's "alive" pipe and wait for it to exit: no process outlives the batch.
    Nothing happens where none runs (the pool stopped it already).

    ``kill``: SIGKILL it first. A fork server still importing reads its pipe only once it is done, so
    a batch that needed no grader process would otherwise wait for the whole torch import.

    The standard library has no public call for this; ``ForkServer._stop`` (what its own tests use) does
    exactly that, and the next ``ensure_running`` starts a fresh one.
    """
    from multiprocessing import forkserver

    server = forkserver._forkserver
    stop = getattr(server, "_stop", None)
    if stop is None:  # another Python: it exits once this process, its last holder of the pipe, exits
        return
    pid = getattr(server, "_forkserver_pid", None)
    if kill and pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    try:
        stop()
    except ChildProcessError:  # reaped already (the batch's reaper)
        pass
    _remove_socket_folder()


def _remove_socket_folder() -> None:
    """Python 3.11 made a folder (``$TMPDIR/pymp-XXXXXXXX``) for the fork server's socket, to be removed when
    this process exits, by a finaliser that the console command skips: it leaves through ``os._exit``, so as
    not to tear torch down. Every ``grade-all`` left one in the staff's ``$TMPDIR``. Run now (the socket is
    gone with the server), the finaliser removes it and forgets it, so a later fork server makes another.
    Python 3.12 binds an abstract socket and makes no folder; where these names differ, nothing happens."""
    from multiprocessing import util

    cleanup = getattr(util, "_remove_temp_dir", None)
    registry = getattr(util, "_finalizer_registry", {})
    for finalizer in list(registry.values()):
        if cleanup is not None and getattr(finalizer, "_callback", None) is cleanup:
            finalizer()
