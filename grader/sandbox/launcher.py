"""Start the warm worker server process, without importing torch here.

``grader grade`` starts the server first thing, so the server's ``import
torch`` runs while the judge does its own imports (two cores, two imports);
``wait_ready`` blocks only when the first child is needed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from grader.sandbox.errors import WorkerUnavailable

SERVER_START_TIMEOUT = 120.0


class WorkerServer:
    """The warm server process. Start it before loading any secret."""

    def __init__(self, python: str = sys.executable) -> None:
        self._lock = threading.Lock()
        self._conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["OMP_NUM_THREADS"] = "1"
        self._proc = subprocess.Popen(
            [python, "-m", "grader.sandbox.server", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if not os.environ.get("GRADER_DEBUG") else None,
            cwd=tempfile.gettempdir(),
            env=env,
            start_new_session=True,
        )
        theirs.close()
        self._ready = False

    def wait_ready(self) -> None:
        """Block until the server has imported torch; start-up overlaps the judge's own imports."""
        if self._ready:
            return
        from grader.sandbox import protocol  # imports torch: only now, so the CLI can start us first

        self._conn.settimeout(SERVER_START_TIMEOUT)
        try:
            hello = protocol.decode(self._conn.recv(1 << 16))
        except (OSError, protocol.ProtocolError) as exc:
            self.close()
            raise WorkerUnavailable(f"the worker server did not start: {exc}") from None
        if not isinstance(hello, dict) or not hello.get("ready"):
            self.close()
            raise WorkerUnavailable("the worker server did not start")
        self._conn.settimeout(30.0)
        self._ready = True

    def spawn(self, policy: dict[str, Any]) -> tuple[int, socket.socket, int, int]:
        """Fork a child; returns (pid, socket, output fd, pidfd)."""
        from grader.sandbox import protocol

        self.wait_ready()
        with self._lock:
            try:
                self._conn.send(protocol.encode({"op": "spawn", "policy": policy}))
                data, fds, _, _ = socket.recv_fds(self._conn, 1 << 16, 3)
            except OSError as exc:
                raise WorkerUnavailable(f"the worker server stopped answering: {exc}") from None
        reply = protocol.decode(data)
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise WorkerUnavailable(f"the worker server could not start a child: {reply.get('error', 'no descriptors')}")
        return int(reply["pid"]), socket.socket(fileno=fds[0]), fds[1], fds[2]

    def reap(self, pid: int) -> int | None:
        """Wait for a dead (or killed) child; returns its raw wait status."""
        from grader.sandbox import protocol

        with self._lock:
            try:
                self._conn.send(protocol.encode({"op": "reap", "pid": pid}))
                return protocol.decode(self._conn.recv(1 << 16)).get("status")
            except (OSError, protocol.ProtocolError):
                return None

    def close(self) -> None:
        self._conn.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()

    def __enter__(self) -> WorkerServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
