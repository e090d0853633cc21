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

import dataclasses
import os
import signal
import socket
import sys

import torch

from grader.sandbox import child, layers, protocol, workspace
from grader.sandbox.warmup import warm_up_worker

MAX_REQUEST = 1 << 20


def warm_up() -> None:
    """Do, once, the lazy work every child would otherwise repeat.

    ``set_num_threads(1)`` comes first, before any tensor op: forked children
    of a process that ran a multi-threaded op deadlock on their first
    parallel op (measured here).
    """
    warm_up_worker()
    protocol.decode(protocol.encode((torch.zeros(3), {"x": [1, 2.5, None]})))
    layers.python_readable_paths()  # imports what the layers need before any child locks itself down
    workspace.preload_plotting()  # plotting is common in this lesson's submissions; a child would pay ~0.45 s


def spawn(conn: socket.socket, request: dict) -> int:
    """Fork one child for one submission and hand its descriptors to the judge."""
    policy, threads = _policy(request.get("policy") or {})
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


def _policy(raw: dict) -> tuple[layers.ChildPolicy, int]:
    known = {f.name for f in dataclasses.fields(layers.ChildPolicy)}
    values = {k: v for k, v in raw.items() if k in known}
    values["disabled"] = frozenset(values.get("disabled", ()))
    values["readable_paths"] = tuple(values.get("readable_paths", ()))
    return layers.ChildPolicy(**values), int(raw.get("threads", 1))


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
    try:
        while True:
            data = conn.recv(MAX_REQUEST)
            if not data:
                break
            request = protocol.decode(data)
            op = request.get("op") if isinstance(request, dict) else None
            if op == "spawn":
                try:
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
