"""Typed outcomes of calling student code, raised by the proxy in the judge.

Scoring maps each to a check status and a message a student can act on:
``NotAttempted`` -> failed "not attempted"; ``StudentTimeout`` -> timeout;
``StudentCrash`` / ``StudentError`` / ``LoadFailed`` / ``NotDefined`` -> error
(or failed, where a check expected an exception of another type).
"""

from __future__ import annotations

from typing import Callable

Where = Callable[[int], str] | None  # a line of the graded source as the student finds it (``Submission.where``)


def place(reply: dict, where: Where) -> str:
    """Where the student's code raised: ``line 12``, or ``cell 4, line 3`` for a notebook (``where``)."""
    line = int(reply["line"])
    return where(line) if where is not None else f"line {line}"


class WorkerUnavailable(Exception):
    """The sandbox itself could not run: a grader problem, never a student's."""


class StudentProblem(Exception):
    """Base of everything a submission can cause."""

    status = "error"

    def student_message(self) -> str:
        return str(self)


class NotAttempted(StudentProblem):
    status = "failed"

    def __init__(self, name: str) -> None:
        super().__init__(f"`{name}`: not attempted (it still raises NotImplementedError)")
        self.name = name


class NotDefined(StudentProblem):
    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(detail or f"`{name}` is not defined")
        self.name = name


class StudentTimeout(StudentProblem):
    status = "timeout"

    def __init__(self, what: str, limit: str, text: str | None = None) -> None:
        super().__init__(text or f"{what}: still running after {limit}; is there an endless loop?")


class StudentCrash(StudentProblem):
    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"{what}: {detail}")


class StudentError(StudentProblem):
    """The student's code raised; ``reply`` holds the plain facts the worker sent."""

    def __init__(self, name: str, reply: dict, note: str = "", where: Where = None) -> None:
        self.name = name
        self.reply = reply
        self.note = note  # said after the raise: where a value it raised on came from (``proxy``), or what it calls
        self.exc_type = str(reply.get("type") or reply.get("kind") or "error")
        self.builtin = bool(reply.get("builtin"))
        text = str(reply.get("message") or "")
        where = f" ({place(reply, where)})" if reply.get("line") else ""
        if reply.get("kind") == "memory":
            detail = f"ran out of memory{where}: {text}"
        else:
            detail = f"raised {self.exc_type}{where}: {text}"
        super().__init__(f"`{name}` {detail}" + (f"; {note}" if note else ""))


class LoadFailed(StudentProblem):
    """The file itself could not be loaded (an exception, hang or crash at import)."""

    def __init__(self, reply: dict, where: Where = None) -> None:
        self.reply = reply
        where = f" at {place(reply, where)}" if reply.get("line") else ""
        kind = reply.get("type") or reply.get("kind")
        super().__init__(f"your file could not be loaded: {kind}{where}: {reply.get('message', '')}")
