"""Start the warm worker server process: a fork of this one, or a fresh interpreter.

``WorkerServer.forked()`` is what the grader's own processes use (``grader grade``,
``grader check``, each ``grade-all`` grader process): this process imports torch and the
sandbox once, forks the server, and only then loads the config, the hidden checks and the
reference, so the server holds no secret and torch is imported once per process tree. The
forked server scrubs the environment it inherited (``server.scrub_environment``) before it
does anything else. A process that may already hold a secret (a library caller, a test
session) gets ``WorkerServer()``: a fresh interpreter that imports torch on its own, started
without importing torch here; ``wait_ready`` blocks only when the first child is needed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from grader.sandbox.errors import WorkerUnavailable
from grader.sandbox.spawn_server import SpawnServer, fork_server_missing

SERVER_START_TIMEOUT = 120.0
SERVER_STOP_SECONDS = 5.0
# All the server's environment may hold; the last four are Windows' own (without SYSTEMROOT Python cannot
# even seed its random numbers there), never a secret.
KEPT_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE")
# Loaded, these hold what the server must never see (the hidden checks, the reference, the graded state).
SECRET_MODULES = ("grader.session", "grader.checks.", "grader.scoring", "grader.diagnosis", "_reference_")


def server_environment() -> dict[str, str]:
    """The server's whole environment: never a secret (GRADER_COURSE_SECRET, GRADER_HIDDEN_KEY...)."""
    env = {k: v for k, v in os.environ.items() if k.upper() in KEPT_ENVIRONMENT}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    return env


def can_fork_clean() -> bool:
    """Whether this process may fork the server: one thread (a fork of a threaded process may deadlock)
    and nothing secret loaded yet."""
    return threading.active_count() == 1 and not any(
        name.startswith(SECRET_MODULES) for name in list(sys.modules))


def start_server(fork: bool = True) -> AnyServer:
    """The worker server this system can run: the warm Linux one (``fork``: ``WorkerServer.forked``, else
    a fresh interpreter), or, where Linux's fork, pidfd and AF_UNIX are missing (macOS, Windows: the
    student kit on a laptop), ``spawn_server.SpawnServer``, a fresh interpreter per child over TCP."""
    missing = fork_server_missing()
    if missing is not None:
        return SpawnServer(why=missing)
    return WorkerServer.forked() if fork else WorkerServer()


class WorkerServer:
    """The warm server process. Start it before loading any secret."""

    def __init__(self, python: str = sys.executable) -> None:
        theirs = self._open()
        self._proc: subprocess.Popen | None = subprocess.Popen(
            [python, "-m", "grader.sandbox.server", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if not os.environ.get("GRADER_DEBUG") else None,
            cwd=tempfile.gettempdir(),
            env=server_environment(),
            start_new_session=True,
        )
        self._pid = self._proc.pid
        theirs.close()
        self._ready = False

    @classmethod
    def forked(cls) -> WorkerServer:
        """The server as a fork of this process, which imports torch (once for both) and the sandbox here.

        Call it first, before the config, the hidden checks or the reference are loaded: the server
        inherits this process's memory. Where this process cannot fork cleanly (threads, or a secret
        already loaded) a fresh interpreter is started instead, as ``WorkerServer()``.
        """
        if not can_fork_clean():
            return cls()
        from grader.sandbox import server  # imports torch and the sandbox: once, shared with the fork

        server.prepare_fork()
        self = cls.__new__(cls)
        theirs = self._open()
        env = server_environment()
        pid = os.fork()
        if pid == 0:  # the server: never returns
            self._conn.close()
            server.run_forked(theirs, env)
        theirs.close()
        self._proc, self._pid, self._ready = None, pid, False
        return self

    def _open(self) -> socket.socket:
        """Our end of the server's socket and its lock; returns the server's end."""
        self._lock = threading.Lock()
        self._conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        return theirs

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

    def spawn(self, policy: dict[str, Any], warm: tuple[str, ...] = ()) -> tuple[int, socket.socket, int, int]:
        """Fork a child; returns (pid, socket, output fd, pidfd). ``warm``: what the server should have
        loaded before this fork (``server.warm_on_demand``)."""
        from grader.sandbox import protocol

        self.wait_ready()
        with self._lock:
            try:
                self._conn.send(protocol.encode({"op": "spawn", "policy": policy, "warm": list(warm)}))
                data, fds, _, _ = socket.recv_fds(self._conn, 1 << 16, 3)
            except OSError as exc:
                raise WorkerUnavailable(f"the worker server stopped answering: {exc}") from None
        reply = protocol.decode(data)
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise WorkerUnavailable(f"the worker server could not start a child: {reply.get('error', 'no descriptors')}")
        return int(reply["pid"]), socket.socket(fileno=fds[0]), fds[1], fds[2]

    def worker_kind(self) -> str | None:
        """None: the children are forks of this warm server, the usual case (a card says nothing)."""
        return None

    def kill(self, pid: int, pidfd: int) -> None:
        """SIGKILL a child through its pidfd (no race with pid reuse), and its process group."""
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        os.killpg(pid, signal.SIGKILL)  # the group too; safe: the server reaps only when asked (``reap``)

    def reap(self, pid: int) -> int | None:
        """Wait for a dead (or killed) child; returns its exit code (-N: killed by signal N)."""
        from grader.sandbox import protocol

        with self._lock:
            try:
                self._conn.send(protocol.encode({"op": "reap", "pid": pid}))
                status = protocol.decode(self._conn.recv(1 << 16)).get("status")
            except (OSError, protocol.ProtocolError):
                return None
        return os.waitstatus_to_exitcode(status) if type(status) is int else None

    def release(self, pidfd: int) -> None:
        """Close a reaped child's pidfd."""
        os.close(pidfd)

    @property
    def pid(self) -> int:
        return self._pid

    def close(self) -> None:
        """Close our end: the server kills and reaps its children and exits; SIGKILL after a grace period."""
        self._conn.close()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=SERVER_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(self._pid, signal.SIGKILL)
                self._proc.wait()
            return
        deadline = time.monotonic() + SERVER_STOP_SECONDS
        while time.monotonic() < deadline:
            try:
                if os.waitpid(self._pid, os.WNOHANG)[0]:
                    return
            except ChildProcessError:
                return
            time.sleep(0.01)
        try:
            os.killpg(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass

    def __enter__(self) -> WorkerServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


AnyServer = WorkerServer | SpawnServer  # what a SubmissionWorker runs its children through
