"""The warm worker server: pays for ``import torch`` once, then forks children.

It is started by the judge *before* any secret (reference, hidden checks,
expected values) is loaded, it never loads one, and it never runs student
code itself: each submission gets a fresh forked child (``child.py``) that
inherits the warm interpreter and nothing else.

The judge talks to it over an AF_UNIX SOCK_SEQPACKET pair, one small
message per request; a ``spawn`` reply carries the child's socket, the read
end of its output pipe and a pidfd as SCM_RIGHTS, so the judge can talk to
and kill the child directly without racing pid reuse.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from typing import NoReturn

import torch

from grader.sandbox import child, layers, protocol, workspace
from grader.sandbox.layers.policy import child_policy
from grader.sandbox.warmup import freeze_what_is_loaded, warm_up_judge, warm_up_worker

MAX_REQUEST = 1 << 20


INDUCTOR_CACHE = "TORCHINDUCTOR_CACHE_DIR"


@contextlib.contextmanager
def own_inductor_cache() -> Iterator[None]:
    """torch's inductor cache folder pointed at a folder of the server's own, removed on leaving.

    Importing ``torch._dynamo`` (which the warm-up may do: ``masked_fill`` on ``meta``) creates
    inductor's cache folder at once, ``$TMPDIR/torchinductor_<user>`` unless ``TORCHINDUCTOR_CACHE_DIR``
    says otherwise, and sets that variable. Every ``grader`` command left that empty folder in the
    staff's ``$TMPDIR``. Nothing here compiles, so the folder is never written: it is made inside a
    folder of ours and removed with it, and the variable is unset again, so a child (which gets a
    scratch ``TMPDIR`` of its own, ``workspace``) that does compile caches inside its scratch."""
    folder = tempfile.mkdtemp(prefix="grader-server-")
    os.environ[INDUCTOR_CACHE] = os.path.join(folder, "torchinductor")
    try:
        yield
    finally:
        os.environ.pop(INDUCTOR_CACHE, None)
        shutil.rmtree(folder, ignore_errors=True)


def warm_up() -> None:
    """Do, once, the lazy work every child would otherwise repeat.

    ``set_num_threads(1)`` comes first, before any tensor op: forked children
    of a process that ran a multi-threaded op deadlock on their first
    parallel op (measured here).
    """
    with own_inductor_cache():
        warm_up_worker()
    protocol.decode(protocol.encode((torch.zeros(3), {"x": [1, 2.5, None]})))
    layers.python_readable_paths()  # imports what the layers need before any child locks itself down
    freeze_what_is_loaded()  # again: what the worker's share and the layers loaded since


def warm_on_demand(wanted: list, warmed: set[str]) -> None:
    """What only some submissions use, warmed the first time one asks, before its child is forked: every
    later child shares it. ``plotting``: pyplot on Agg (~0.3 s of CPU; a child would pay it again each
    time), asked for by the judge when the source mentions matplotlib."""
    if "plotting" in wanted and "plotting" not in warmed:
        workspace.preload_plotting()
        warmed.add("plotting")


def spawn(conn: socket.socket, request: dict) -> int:
    """Fork one child for one submission and hand its descriptors to the judge."""
    policy, threads = child_policy(request.get("policy") or {})
    judge_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        judge_end.close()
        os.close(out_r)
        child.main(child_end, out_w, policy, threads)
        os._exit(70)
    child_end.close()
    os.close(out_w)
    try:
        os.setpgid(pid, pid)
    except (PermissionError, ProcessLookupError):
        pass  # the child already did it (or already died); both are fine
    pidfd = os.pidfd_open(pid)
    try:
        socket.send_fds(conn, [protocol.encode({"pid": pid})], [judge_end.fileno(), out_r, pidfd])
    finally:
        judge_end.close()
        os.close(out_r)
        os.close(pidfd)
    return pid


def reap(conn: socket.socket, request: dict, children: set[int]) -> None:
    pid = request.get("pid")
    status = None
    if type(pid) is int and pid in children:
        try:
            os.killpg(pid, signal.SIGKILL)  # a child is reaped only once it is gone
        except ProcessLookupError:
            pass
        _, raw = os.waitpid(pid, 0)
        children.discard(pid)
        status = raw
    conn.send(protocol.encode({"status": status}))


def serve(conn: socket.socket) -> None:
    children: set[int] = set()
    warmed: set[str] = set()
    try:
        while True:
            data = conn.recv(MAX_REQUEST)
            if not data:
                break
            request = protocol.decode(data)
            op = request.get("op") if isinstance(request, dict) else None
            if op == "spawn":
                try:
                    warm_on_demand(list(request.get("warm") or ()), warmed)
                    children.add(spawn(conn, request))
                except (ValueError, TypeError, OSError) as exc:  # a bad policy or no resources: say so, keep serving
                    conn.send(protocol.encode({"error": f"{type(exc).__name__}: {exc}"}))
            elif op == "reap":
                reap(conn, request, children)
            elif op == "ping":
                conn.send(protocol.encode({"pong": True}))
            else:
                break
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def prepare_fork() -> None:
    """What the grader process and its forked server both need, done once before the fork: one thread
    (forked children of a multi-threaded torch deadlock), no ``torch._dynamo``, autograd. The worker's
    own share (sympy, the meta device, nn) is warmed after the fork, while the judge starts."""
    warm_up_judge()


def run_forked(conn: socket.socket, env: dict[str, str]) -> NoReturn:
    """The server's life as a fork of a grader process (``launcher.WorkerServer.forked``); never returns.

    It leaves the grader's session and signals, drops every descriptor but its socket, and keeps
    nothing of the grader's environment but ``env`` before it does anything else.
    """
    code = 70
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the judge decides when we stop
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the grader process's handler
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # a grade-all grader process forks with it blocked
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        layers.close_inherited_fds(keep=(0, 1, 2, conn.fileno()))
        scrub_environment(env)
        os.chdir(tempfile.gettempdir())
        warm_up()
        conn.send(protocol.encode({"ready": True, "torch": torch.__version__}))
        serve(conn)
        code = 0
    finally:
        os._exit(code)


def scrub_environment(keep: dict[str, str]) -> None:
    """Keep only ``keep`` of the environment this process inherited, and leave no trace of the rest in memory.

    A forked server holds its grader process's environment three times: Python's ``os.environ``
    (bytes values), libc's ``environ`` array, and the block the kernel wrote at ``exec`` (what
    ``/proc/self/environ`` reads). A course secret there (``GRADER_COURSE_SECRET``,
    ``GRADER_HIDDEN_KEY``) would be in every sandboxed child's memory, so each value not kept is
    zeroed in place, libc's environment rebuilt from ``keep``, and the exec block zeroed.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    data = os.environ._data  # noqa: SLF001 - posix.environ itself: the only Python copy of the values
    for key, value in list(data.items()):
        # Zeroed in place; never a 0- or 1-byte value, which CPython shares between all such objects.
        if os.fsdecode(key) not in keep and isinstance(value, bytes) and len(value) > 1:
            ctypes.memset(ctypes.cast(ctypes.c_char_p(value), ctypes.c_void_p).value, 0, len(value))
    data.clear()
    libc.clearenv()
    start, end = _exec_environment_block()
    if start and end > start:
        ctypes.memset(start, 0, end - start)
    for key, value in keep.items():
        os.environ[key] = value  # putenv too: libc's array now points at new copies


def _exec_environment_block() -> tuple[int, int]:
    """Where the kernel wrote the environment at exec: ``env_start`` and ``env_end`` of /proc/self/stat."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[47]), int(fields[48])  # fields 50 and 51, counted from 1, after pid and comm
    except (OSError, IndexError, ValueError):
        return 0, 0


def main() -> None:
    fd = int(sys.argv[1])
    conn = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the judge decides when we stop
    warm_up()
    conn.send(protocol.encode({"ready": True, "torch": torch.__version__}))
    serve(conn)  # returns once the judge has closed its end; every child has been killed and reaped
    os._exit(0)  # skip tearing torch down: the judge waits for this exit


if __name__ == "__main__":
    main()
