"""The pool of grader processes: ``--jobs`` processes, each a warm ``api.Grader`` (one worker server, one
pytest session: the same grading path as ``grader grade``), pinned to a core, fed two submissions at a
time; one that dies or stops answering is replaced and costs its submission an ``error`` row.

The grader processes are forks of one zygote (multiprocessing's fork server, preloading
``grader.batch.zygote``): torch is imported once per batch, not once per grader process, nor again for a
replacement. The fork server is one per process (the standard library's), so a process runs one pool at a time,
as ``grade-all`` does: closing a pool stops it. This module never imports torch: the zygote does."""

from __future__ import annotations

import multiprocessing
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiprocessing import resource_tracker

from grader import seeds
from grader.batch import fork_server, reaper
from grader.config import AssignmentConfig


JOB_GRACE_SECONDS = 60.0  # beyond a submission's own limits, before its grader process counts as hung


STOP_GRACE_SECONDS = 5.0  # a stopping grader process gets this long to clean up its sandbox


class BatchStopped(Exception):
    """A grader process could not start (strict mode refused, the sandbox failed...): nothing more can be graded."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def grader_process(inbox: Any, results: Any, cpu: int | None, scratch: str, assignment_id: str, config_path: str,
                  strict: bool, secret_file: str | None) -> None:
    """A grader process's life; ends with ``os._exit``, skipping the teardown of torch (~0.5 s).

    By then the grader process's sandbox and server are closed and what it sent is flushed to the batch.
    """
    code = 0
    stopping = threading.Event()  # SIGTERM came: whatever is raised from here on is the stop, not a crash
    take_sigterm_as_stop(stopping)
    try:
        _serve(inbox, results, cpu, scratch, assignment_id, config_path, strict, secret_file)
    except SystemExit as exc:  # SIGTERM, after the finally blocks cleaned up
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a grader process's own crash: say why on stderr, the batch records the row
        if stopping.is_set():
            code = 143  # the stop interrupted a wait that turned it into another exception: no crash to report
        else:
            traceback.print_exc()
            code = 1
    results.close()
    results.join_thread()
    sys.stderr.flush()
    os._exit(code)


def take_sigterm_as_stop(stopping: threading.Event) -> None:
    """SIGTERM sets ``stopping`` and raises ``SystemExit(143)`` in the main thread, so the grading in
    progress ends through its ``finally`` blocks (its sandboxed child killed, its scratch removed).

    A handler runs wherever the main thread is, and some places cannot raise: a gc callback (hypothesis
    keeps one), a ``__del__``, a weakref callback. There Python prints "Exception ignored in ..." with a
    traceback and carries on, the stop lost. So such a swallowed stop ends the process at once instead,
    silently: its worker server sees the socket close and kills its children, and the batch removes the
    scratch folder it gave this process (``GraderPool.close``)."""

    def on_sigterm(*_: object) -> None:
        stopping.set()
        sys.exit(143)

    def on_unraisable(unraisable: Any) -> None:
        if stopping.is_set() and isinstance(unraisable.exc_value, SystemExit):
            sys.stderr.flush()
            os._exit(143)
        sys.__unraisablehook__(unraisable)

    sys.unraisablehook = on_unraisable
    signal.signal(signal.SIGTERM, on_sigterm)


def _serve(inbox: Any, results: Any, cpu: int | None, scratch: str, assignment_id: str, config_path: str,
           strict: bool, secret_file: str | None) -> None:
    """One grader process: a warm ``api.Grader`` grading the paths it is sent, one at a time.

    Runs in its own process (never the one that writes files). SIGINT is the
    batch's to decide on; SIGTERM ends the current grading through its
    ``finally`` blocks, so the sandboxed child is killed and scratch removed.
    Every message carries this process's pid, so the pool knows whose it is.

    With ``cpu``, the grader process, its worker server and every sandboxed child stay
    on that core: a check is a ping-pong of ~180 small requests between grader process
    and child, and on one core each hand-over is a plain context switch rather
    than a cross-core wake-up (measured: 0.22-0.25 -> 0.19-0.21 s a grade). It also
    keeps a spinning submission off the other grader processes' cores.
    """
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    tempfile.tempdir = scratch  # sandbox scratch folders go under the batch's own, removed at its end
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # SIGTERM: grader_process's handler
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    me = os.getpid()
    from grader.sandbox.launcher import WorkerServer

    server = WorkerServer.forked()  # first, before anything secret is loaded: one import of torch for both
    # SIGTERM unblocked only now: its handler, run inside the fork's at-fork hooks, was "ignored" there (a
    # traceback on stderr, the stop lost). One that came while the server was forked is taken here.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    from grader import api, scorecard
    from grader.config import ConfigError
    from grader.submission import UnreadableSubmission

    try:
        grader = api.Grader(assignment_id, config_path=Path(config_path), server=server, strict=strict,
                            course_secret_file=Path(secret_file) if secret_file else None)
    except (ConfigError, api.SecretsExposed, seeds.SecretError) as exc:
        results.put((me, "fatal", (2, str(exc))))
        server.close()
        return
    try:
        results.put((me, "ready", None))
        while (task := inbox.get()) is not None:
            student, path = task
            try:
                card = grader.grade(Path(path), student)  # their own hidden inputs (grader.seeds)
                results.put((me, "card", (student, scorecard.to_valid_json(card), bool(card.grader_error))))
            except UnreadableSubmission as exc:
                results.put((me, "unreadable", (student, str(exc))))
            except api.StrictModeRefused as exc:
                results.put((me, "fatal", (2, str(exc))))
                return
    finally:
        grader.close(wait=False)
        server.close()


@dataclass
class _Slot:
    process: Any
    inbox: Any
    tasks: list[tuple[str, str]] = field(default_factory=list)  # sent, in order; the first is being graded
    since: float = 0.0  # when the first task started (or the grader process became free for it)
    ready: bool = False


class GraderPool:
    """``jobs`` grader processes; each holds one submission and the next one queued.

    The queued one means a grader process never waits for this process to write the
    last card before it starts the next submission.
    """

    DEPTH = 2

    def __init__(self, jobs: int, assignment: AssignmentConfig, config_path: Path, strict: bool,
                 secret_file: Path | None = None) -> None:
        # Forks of a fresh interpreter that imported only the zygote: no inherited state, threads or secrets.
        self._ctx = multiprocessing.get_context("forkserver")
        self._keep = set(reaper.children())  # what this process had before the batch: not the batch's to reap
        self._adopting = reaper.adopt_orphans()  # a killed grader process's server and children come back here
        self._results = self._ctx.Queue()
        self._args = (assignment.id, str(config_path), strict, str(secret_file) if secret_file else None)
        # Where the sandbox scratch folders go: removed by ``close`` even after a grader process was killed.
        self._scratch = tempfile.mkdtemp(prefix="grader-batch-")
        limits = assignment.limits
        self._deadline = (limits.submission_wall_seconds + limits.load_cpu_seconds + limits.call_wall_seconds
                          + JOB_GRACE_SECONDS)
        cores = sorted(os.sched_getaffinity(0))
        # One grader process per core, pinned; more grader processes than cores share them all.
        self._cpus: list[int | None] = [cores[i] for i in range(jobs)] if jobs <= len(cores) else [None] * jobs
        self._slots: list[_Slot] = []
        try:
            fork_server.start_zygote()  # running already when grade-all started it first
            for i in range(jobs):
                self._slots.append(self._start(i))
        except BatchStopped:
            self.close(graceful=False)  # the zygote, the scratch folder, what did start
            raise

    def _start(self, slot: int) -> _Slot:
        """A grader process for ``slot``; the first one waits for the zygote to import torch."""
        inbox = self._ctx.SimpleQueue()
        process = self._ctx.Process(target=grader_process,
                                    args=(inbox, self._results, self._cpus[slot], self._scratch, *self._args),
                                    daemon=True)
        with fork_server.signals_blocked():  # should the zygote have died, the one started again here is born with them blocked
            try:
                process.start()
            except (OSError, EOFError) as exc:  # the zygote died (torch failed to load there...) or cannot be reached
                raise BatchStopped(f"the grader processes could not be started ({type(exc).__name__}: {exc}); "
                                   f"the process that loads torch for them ({fork_server.ZYGOTE}) stopped: its error is above",
                                   3) from None
        return _Slot(process, inbox)

    def idle(self) -> list[_Slot]:
        """Grader processes with room for another task."""
        return [j for j in self._slots if len(j.tasks) < self.DEPTH and j.process.is_alive()]

    def busy(self) -> bool:
        return any(j.tasks for j in self._slots)

    def send(self, slot: _Slot, student: str, path: Path) -> None:
        if not slot.tasks:
            slot.since = time.monotonic()
        slot.tasks.append((student, str(path)))
        slot.inbox.put(slot.tasks[-1])

    def events(self, wait: float) -> Iterator[tuple[str, Any]]:
        """Results as ``(kind, payload)``; a grader process that died or hung yields ``("lost", (student, why))``."""
        try:
            sender, kind, payload = self._results.get(timeout=wait)
        except queue.Empty:
            pass
        else:
            slot = next((j for j in self._slots if j.process.pid == sender), None)
            if slot is not None:
                slot.ready = True
                if kind in ("card", "unreadable") and slot.tasks:
                    slot.tasks.pop(0)
                    slot.since = time.monotonic()
            yield kind, payload
        now = time.monotonic()
        for i, slot in enumerate(self._slots):
            hung = bool(slot.tasks) and now - slot.since > self._deadline
            if slot.process.is_alive() and not hung:
                continue
            if slot.tasks:
                why = (f"the grader stopped answering after {self._deadline:g} s" if hung
                       else f"the grader process died (exit {slot.process.exitcode})")
                yield "lost", (slot.tasks[0][0], why)
                self._stop(slot)
                self._slots[i] = self._start(i)
                for student, path in slot.tasks[1:]:  # queued behind the lost one: not started, resend
                    self.send(self._slots[i], student, Path(path))
                continue
            if not slot.ready:
                self._results_drain_fatal()
                yield "fatal", (3, f"a grader process could not start (exit {slot.process.exitcode})")
            self._stop(slot)
            self._slots[i] = self._start(i)

    def _results_drain_fatal(self) -> None:
        """A grader process that died at start may have said why: raise that instead of a bare exit code."""
        try:
            while True:
                _, kind, payload = self._results.get(timeout=0.5)
                if kind == "fatal":
                    raise BatchStopped(payload[1], payload[0])
        except queue.Empty:
            return

    def _stop(self, slot: _Slot) -> None:
        if slot.process.is_alive():
            slot.process.terminate()  # SIGTERM: it kills its sandboxed child and removes its scratch
            slot.process.join(STOP_GRACE_SECONDS)
        if slot.process.is_alive():
            slot.process.kill()  # its worker server sees the socket close and kills its own children
            slot.process.join()

    def close(self, graceful: bool) -> None:
        """Graceful: finish and exit; otherwise SIGTERM now (then SIGKILL after a grace period)."""
        for slot in self._slots:
            if graceful and slot.process.is_alive():
                slot.inbox.put(None)
        deadline = time.monotonic() + (30.0 if graceful else 0.0)
        for slot in self._slots:
            slot.process.join(max(0.0, deadline - time.monotonic()))
            self._stop(slot)
        fork_server.stop_zygote()
        self._results.close()
        self._results.join_thread()
        # Every server and sandboxed child of the batch is gone and reaped. Python's resource tracker stays:
        # it holds the queues' semaphores and ends by itself when this process exits.
        tracker = getattr(resource_tracker, "_resource_tracker", None)
        reaper.reap_descendants(self._keep | ({tracker._pid} if tracker is not None and tracker._pid else set()))
        if self._adopting:
            reaper.adopt_orphans(False)
        shutil.rmtree(self._scratch, ignore_errors=True)  # a killed grader process could not remove its own
