"""The judge's side of the sandbox: drive one submission's child.

``SubmissionWorker`` (over a ``launcher.WorkerServer``) owns the
current child for one submission: it loads the source, sends requests with a
CPU-time limit (read from ``/proc``, which the child cannot fake) and a
wall-clock backstop, kills the child's process group with SIGKILL when a
limit passes, and starts a fresh child for the next request after any crash.
Output the child prints goes through a capped drain and never fills memory.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.sandbox import protocol
from grader.sandbox.launcher import WorkerServer
from grader.sandbox.limits import Limits
from grader.sandbox.usage import cpu_seconds, resident_bytes
from grader.sandbox.errors import (
    LoadFailed,
    NotAttempted,
    NotDefined,
    StudentCrash,
    StudentError,
    StudentTimeout,
    Where,
    WorkerUnavailable,
)



class OutputDrain(threading.Thread):
    """Reads a child's stdout/stderr, keeps the first ``keep`` bytes, counts the rest."""

    def __init__(self, fd: int, keep: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep = fd, keep
        self.kept = bytearray()
        self.dropped = 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 16):
                room = self.keep - len(self.kept)
                self.kept += chunk[: max(room, 0)]
                self.dropped += max(len(chunk) - max(room, 0), 0)
        except OSError:
            pass  # the pipe broke: the child is gone, and what it printed so far is kept
        finally:
            os.close(self.fd)


@dataclass
class Child:
    pid: int
    sock: socket.socket
    pidfd: int
    drain: OutputDrain


class SubmissionWorker:
    """All student code for one submission runs through here, in a child process."""

    def __init__(self, server: WorkerServer, source: str, filename: str, limits: Limits, scratch: Path,
                 where: Where = None, units: tuple[int, ...] = ()) -> None:
        """``where``: a line of ``source`` as the student finds it (``Submission.where``: a notebook's cell
        and line), for the messages of errors raised by their code. ``units``: for a notebook, the lines
        where a ``from __future__`` import starts a unit the child compiles apart (``Submission.units``)."""
        self.server, self.source, self.filename, self.limits = server, source, filename, limits
        self.units = units
        self.where = where
        self.scratch = scratch
        self.incidents = 0  # crashes and timeouts so far: a check that saw one cannot pass
        self.layers: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.load_error: dict | None = None
        self.output = bytearray()
        self.output_dropped = 0
        self._child: Child | None = None
        self._timed_out: dict[str, StudentTimeout] = {}  # a function that hung once is not waited on again
        self._spent = 0.0  # wall seconds this submission's requests have used
        self._watch_memory = False

    # -- lifecycle ---------------------------------------------------------

    def _policy(self) -> dict[str, Any]:
        lim = self.limits
        return {
            "memory_mib": lim.memory_mib,
            "cpu_seconds": lim.child_cpu_seconds,
            "file_size_mib": lim.file_size_mib,
            "open_files": lim.open_files,
            "scratch_dir": str(self.scratch),
            "scratch_mib": lim.scratch_mib,
            "threads": lim.threads,
            "disabled": list(lim.disabled_layers),
        }

    def _start(self) -> None:
        # Plotting is warmed in the server only once a submission may use it (its source names matplotlib).
        pid, sock, out_fd, pidfd = self.server.spawn(self._policy(), ("plotting",) if "matplotlib" in self.source else ())
        drain = OutputDrain(out_fd, max(self.limits.output_keep_bytes - len(self.output), 0))
        drain.start()
        child = Child(pid, sock, pidfd, drain)
        self._child = child
        try:
            hello = self._exchange(None, "starting the worker", self.limits.load_cpu_seconds)
        except (StudentTimeout, StudentCrash) as exc:
            raise WorkerUnavailable(f"the sandboxed worker did not start: {exc}") from None
        self.layers = dict(hello.get("layers") or {})
        # No memory limit inside the child (Windows, macOS): the judge watches its memory while a call runs.
        self._watch_memory = self.layers.get("rlimits") != "active"
        try:
            reply = self._exchange(
                {"op": "load", "source": self.source, "filename": self.filename, "units": list(self.units)},
                "loading your file",
                self.limits.load_cpu_seconds,
            )
        except (StudentTimeout, StudentCrash) as exc:
            # Remembered, so a file that hangs at import costs its time once, not once per check.
            reply = {"ok": False, "kind": "timeout" if isinstance(exc, StudentTimeout) else "crash",
                     "message": str(exc)}
        if not reply.get("ok"):
            self.load_error = reply
        else:
            self.names = dict(reply.get("names") or {})

    def ensure_started(self) -> None:
        if self._child is None and self.load_error is None:
            self._start()

    def _kill(self, child: Child) -> int | None:
        # Forget the child first: a signal handler (SIGTERM -> SystemExit) may interrupt the waits below,
        # and a second _kill from a ``finally`` must not close the pidfd again (EBADF hid the exit code).
        if self._child is child:
            self._child = None
        try:
            self.server.kill(child.pid, child.pidfd)
        except ProcessLookupError:
            pass
        status = self.server.reap(child.pid)
        child.sock.close()
        self.server.release(child.pidfd)
        child.drain.join(timeout=5)
        self.output += child.drain.kept
        self.output_dropped += child.drain.dropped
        return status

    def close(self) -> None:
        if self._child is not None:
            self._kill(self._child)

    # -- requests ----------------------------------------------------------

    def request(self, message: dict, what: str) -> dict:
        """Send one request to a live child (starting one if needed) and return its reply."""
        if self.load_error is None and self._child is None:
            self._start()
        if self.load_error is not None:  # a file that failed to load is never run again
            raise LoadFailed(self.load_error, self.where)
        if what in self._timed_out:
            raise StudentTimeout(what, "", f"{self._timed_out[what]} (it hung in an earlier check, so it was not run again)")
        if self._spent > self.limits.submission_wall_seconds:
            budget = self.limits.submission_wall_seconds
            raise StudentTimeout(what, "", f"not run: this submission used up its {budget:g} s time budget")
        started = time.monotonic()
        try:
            return self._exchange(message, what, self.limits.call_cpu_seconds)
        except StudentTimeout as exc:
            self._timed_out[what] = exc
            raise
        finally:
            self._spent += time.monotonic() - started

    def _exchange(self, message: dict | None, what: str, cpu_limit: float) -> dict:
        child = self._child
        assert child is not None
        sent = time.monotonic()
        deadline = sent + self.limits.call_wall_seconds
        start_cpu: float | None = None
        try:
            if message is not None:
                child.sock.settimeout(self.limits.call_wall_seconds)
                protocol.send(child.sock, message)
            while True:
                ready, _, _ = select.select([child.sock], [], [], 0.02)
                if ready:
                    break
                # /proc is read only once a reply is slow (most arrive within a millisecond); the
                # time before that first look counts as CPU time in full, which can only end a call early.
                now_cpu = cpu_seconds(child.pid)
                if now_cpu is None:  # no way to read it on this system: the wall-clock limit alone applies
                    now_cpu = 0.0
                if start_cpu is None:
                    start_cpu = now_cpu - (time.monotonic() - sent)
                used = now_cpu - start_cpu
                if used > cpu_limit:
                    self._fail(child, StudentTimeout(what, f"{cpu_limit:g} s of CPU time"))
                if time.monotonic() > deadline:
                    self._fail(child, StudentTimeout(what, f"{self.limits.call_wall_seconds:g} s of wall time"))
                if self._watch_memory and (resident_bytes(child.pid) or 0) > self.limits.memory_mib << 20:
                    self._fail(child, StudentCrash(what, f"your code used more than {self.limits.memory_mib} MiB "
                                                         "of memory, so the judge stopped it"))
            reply = protocol.recv(child.sock, deadline=max(deadline, time.monotonic() + 0.5))
        except (protocol.PeerClosed, ConnectionError, BrokenPipeError):
            status = self._kill(child)
            self.incidents += 1
            raise StudentCrash(what, _describe_status(status)) from None
        except TimeoutError:
            self._fail(child, StudentTimeout(what, f"{self.limits.call_wall_seconds:g} s of wall time"))
        except protocol.ProtocolError as exc:
            self._fail(child, StudentCrash(what, f"the worker sent a malformed reply ({exc})"))
        if not isinstance(reply, dict):
            self._fail(child, StudentCrash(what, "the worker sent a malformed reply"))
        return reply

    def _fail(self, child: Child, error: Exception) -> None:
        self._kill(child)
        self.incidents += 1
        raise error

    def output_text(self) -> str:
        child = self._child
        kept = bytes(self.output + (child.drain.kept if child else b""))
        dropped = self.output_dropped + (child.drain.dropped if child else 0)
        note = f"\n[... {dropped} more bytes of output not shown]" if dropped else ""
        return kept.decode("utf-8", "replace") + note


WINDOWS_CRASH = 0xC0000000  # NTSTATUS error codes (0xC0000005: access violation) as an exit code


def _describe_status(code: int | None) -> str:
    """What the exit of a child says, from its exit code as ``os.waitstatus_to_exitcode`` and
    ``Popen.returncode`` give it (-N: killed by signal N)."""
    if code is None:
        return "the worker process died"
    if code < 0:
        sig = -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {
            "SIGKILL": " (killed: often the memory limit)",
            "SIGSEGV": " (a crash inside native code)",
            "SIGXCPU": " (CPU time limit of the worker)",
            "SIGXFSZ": " (file size limit)",
            "SIGSYS": " (a forbidden system call)",
        }.get(name, "")
        return f"the worker process was killed by {name}{hint}"
    if code == 71:
        return ("the worker failed while reporting on your code (does it replace Python internals "
                "such as builtins, traceback or sys?)")
    if code >= WINDOWS_CRASH:
        return f"the worker process crashed (status {code:#x}: a crash inside native code)"
    return f"the worker process exited with status {code} (did your code call exit()?)"


def raise_for_reply(reply: dict, called: str, where: Where = None, note: str = "") -> None:
    """Map a failed reply to the typed error the checks and scoring understand; ``where`` says a line of the
    graded source as the student finds it (a notebook's cell and line); ``note``, said after a raise."""
    if reply.get("ok"):
        return
    kind = reply.get("kind")
    if kind == "not_defined":
        raise NotDefined(called, reply.get("message", ""))
    if kind == "not_implemented":
        function = reply.get("function")
        if function in (None, called, "__init__", "forward"):
            raise NotAttempted(called)
        raise StudentError(called, reply, note=f"it calls `{function}`, which is not implemented yet", where=where)
    raise StudentError(called, reply, note=note, where=where)
