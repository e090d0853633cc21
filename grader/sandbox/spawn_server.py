"""The worker where the Linux fork server cannot run: a fresh interpreter per child, over localhost TCP.

The student kit runs ``grader check`` on the student's own laptop: macOS (no ``pidfd_open``, no
``prctl``), Windows (no ``os.fork``, no ``AF_UNIX``, no ``resource``) or Colab. There the warm fork
server (``launcher.WorkerServer``) is replaced by this one, which keeps what matters on any system:

* student code never runs in the judging process: each child is a new interpreter (the ``spawn``
  start method's way: ``subprocess`` starts ``python -m grader.sandbox.spawn_child``), with the
  server's scrubbed environment (``launcher.server_environment``), never the judge's memory;
* the judge talks to it over a TCP socket on 127.0.0.1 (a port of its own choosing, and a random
  token the child must send first, given on the child's stdin, so no other local process can stand
  in for it);
* each call keeps the judge's wall-clock limit (the judge kills the child: ``Popen.kill``, which is
  TerminateProcess on Windows), its CPU-time limit where the child's CPU time can be read
  (``/proc``, or psutil: ``usage.cpu_seconds``), and inside the child every
  layer the system has (``rlimits`` where there is a ``resource`` module: macOS, Linux).

Each child imports torch itself (a few seconds per submission, not per call); the card lists which
layers were active and why the others were not.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from grader.sandbox.errors import WorkerUnavailable

CHILD_START_SECONDS = 120.0  # a cold laptop importing torch: generous, the child is killed past it
TOKEN_BYTES = 32
SIGKILL = getattr(signal, "SIGKILL", 9)  # POSIX only (Windows kills with TerminateProcess); 9 on every POSIX


def fork_server_missing() -> str | None:
    """Why the Linux fork server cannot run here (None when it can): what this system lacks."""
    if not sys.platform.startswith("linux"):
        return f"{sys.platform} is not Linux"
    needs = {"os.fork": hasattr(os, "fork"), "os.pidfd_open": hasattr(os, "pidfd_open"),
             "signal.pidfd_send_signal": _has("signal", "pidfd_send_signal"),
             "socket.AF_UNIX": hasattr(socket, "AF_UNIX"), "socket.send_fds": hasattr(socket, "send_fds")}
    missing = [name for name, there in needs.items() if not there]
    return f"no {', '.join(missing)}" if missing else None


def _has(module: str, name: str) -> bool:
    return hasattr(sys.modules.get(module) or __import__(module), name)


class SpawnServer:
    """``launcher.WorkerServer``'s interface over fresh interpreters: ``spawn``, ``kill``, ``reap``,
    ``release``, ``close``. ``why``: what made the fork server unavailable (for the record)."""

    def __init__(self, why: str = "", python: str | None = None) -> None:
        from grader.sandbox.launcher import server_environment

        self.why = why
        self._python = python or sys.executable
        self._env = server_environment()
        self._children: dict[int, subprocess.Popen] = {}
        self._lock = threading.Lock()

    def worker_kind(self) -> str:
        """What the card records of how the student's code ran: here, not as a fork of the warm server."""
        return f"spawned: a fresh interpreter per child, over 127.0.0.1 (no fork server: {self.why})"

    def wait_ready(self) -> None:
        """Nothing to wait for: each child starts on its own."""

    def spawn(self, policy: dict[str, Any], warm: tuple[str, ...] = ()) -> tuple[int, socket.socket, int, int]:
        """Start a child; returns (pid, socket, output fd, -1: no pidfd). ``warm`` is the fork server's
        (what to load before forking); a fresh child loads what it uses itself."""
        token = secrets.token_bytes(TOKEN_BYTES)
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            proc = self._start(policy, port, token)
            try:
                sock = _accept(listener, proc, token)
            except BaseException:
                _kill(proc)
                proc.wait()
                raise
        out_fd = os.dup(proc.stdout.fileno())  # the drain closes its own copy
        proc.stdout.close()
        with self._lock:
            self._children[proc.pid] = proc
        return proc.pid, sock, out_fd, -1

    def _start(self, policy: dict[str, Any], port: int, token: bytes) -> subprocess.Popen:
        cwd = policy.get("scratch_dir") or tempfile.gettempdir()
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)  # Windows: no Ctrl-C from the console
        try:
            proc = subprocess.Popen(
                [self._python, "-m", "grader.sandbox.spawn_child"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=self._env,
                start_new_session=hasattr(os, "setsid"), creationflags=flags)
        except OSError as exc:
            raise WorkerUnavailable(f"cannot start the worker: {exc}") from None
        request = {"port": port, "token": token.hex(), "policy": policy}
        try:
            proc.stdin.write(json.dumps(request).encode())
            proc.stdin.close()
        except OSError:
            pass  # it died at once: _accept says so
        return proc

    def kill(self, pid: int, handle: int = -1) -> None:
        """Kill a child (and, on POSIX, its process group)."""
        with self._lock:
            proc = self._children.get(pid)
        if proc is not None:
            _kill(proc)

    def reap(self, pid: int) -> int | None:
        """Wait for a killed child; its exit code as ``Popen.returncode`` gives it (-N: signal N)."""
        with self._lock:
            proc = self._children.pop(pid, None)
        if proc is None:
            return None
        _kill(proc)
        return proc.wait()

    def release(self, handle: int) -> None:
        """Nothing held per child here (the fork server closes a pidfd)."""

    def close(self) -> None:
        with self._lock:
            children = list(self._children.values())
            self._children.clear()
        for proc in children:
            _kill(proc)
            proc.wait()

    def __enter__(self) -> SpawnServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _accept(listener: socket.socket, proc: subprocess.Popen, token: bytes) -> socket.socket:
    """The child's connection: the first one that sends ``token``, before the child exits or the time is up."""
    listener.settimeout(0.2)
    deadline = time.monotonic() + CHILD_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = proc.stdout.read(2000).decode("utf-8", "replace").strip() if proc.stdout else ""
            raise WorkerUnavailable(f"the worker exited with status {proc.returncode} before it started"
                                    + (f": {said.splitlines()[-1]}" if said else ""))
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(5.0)
        try:
            got = b""
            while len(got) < len(token) and (part := conn.recv(len(token) - len(got))):
                got += part
        except OSError:
            got = b""
        if secrets.compare_digest(got, token):
            conn.settimeout(None)
            return conn
        conn.close()  # not our child: another local process guessing the port
    raise WorkerUnavailable(f"the worker did not start within {CHILD_START_SECONDS:g} s")


def _kill(proc: subprocess.Popen) -> None:
    """Kill a child that cannot refuse: TerminateProcess on Windows, SIGKILL to its session elsewhere."""
    if proc.poll() is not None:
        return
    if os.name == "nt":
        proc.kill()  # TerminateProcess
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, SIGKILL)  # its own session: whatever it started goes too
        else:
            os.kill(proc.pid, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # gone already (or a zombie whose group is empty): ``wait`` collects it
