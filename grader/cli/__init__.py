"""Command line: a thin layer over ``grader.api``, ``grader.batch`` and ``grader.export``, and the only
place that exits (every status: ``grader.exits``).

``commands`` runs one command line (``main``); ``parser`` holds the verbs and their flags; ``grading`` the
grading verbs (grade, check, grade-all, merge, override); ``course`` the course staff's others (release,
keygen, gradescope, export, ci, new-exercise); ``shared`` what they share. ``python -m grader.cli`` runs it too.

This module imports nothing of the grader's at its top: the console entry point (``run``) is in place, and
catches a Ctrl-C, before the first of the command's imports starts (they take seconds on a busy machine,
and a Ctrl-C among them must still be one line and exit 130, not a traceback).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

LAZY = {"COMMANDS": "grader.cli.commands", "build_parser": "grader.cli.parser",
        "REPORT_FORMATS": "grader.cli.parser", "REPORT_VIEWS": "grader.cli.parser"}  # the CLI's API, read on use


def __getattr__(name: str) -> Any:
    if name in LAZY:
        import importlib

        return getattr(importlib.import_module(LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; returns its exit status (``grader.cli.commands.main``)."""
    from grader.cli.commands import main as run_command

    return run_command(argv, own_process=own_process)


def run() -> None:
    """The console entry point: exit without tearing torch's modules down (~0.5 s); Ctrl-C is one line and
    exit 130, whenever it comes: during the command's imports too. A SIGINT the process was started with
    ignored (a job started in the background by a shell) stays ignored.

    Everything the command writes is closed and flushed by then, and its
    worker server has exited; only the interpreter's own clean-up is skipped.
    """
    try:
        code = main(own_process=True)
    except KeyboardInterrupt:  # Ctrl-C where no command stops on its own (grade-all does): one line, no traceback
        from grader.exits import EXIT_STOPPED

        sys.stderr.write("grader: interrupted\n")
        code = EXIT_STOPPED
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command is over: a late Ctrl-C must not break the exit
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
