"""Command line: a thin layer over ``grader.api``, ``grader.batch`` and ``grader.export``, and the only
place that exits (every status: ``grader.exits``).

``parser`` holds the verbs and their flags; ``grading`` the grading verbs (grade, check, grade-all,
merge, override); ``course`` the course staff's others (release, keygen, gradescope, export, ci,
new-exercise); ``shared`` what they share. ``python -m grader.cli`` runs it too.
"""

from __future__ import annotations

import os
import sys

from grader.cli.course import cmd_ci, cmd_export, cmd_gradescope, cmd_keygen, cmd_new_exercise, cmd_release
from grader.cli.grading import cmd_check, cmd_grade, cmd_grade_all, cmd_merge, cmd_override
from grader.cli.parser import REPORT_FORMATS, REPORT_VIEWS, build_parser  # noqa: F401 - the CLI's API
from grader.cli.shared import fail
from grader.exits import EXIT_STOPPED

COMMANDS = {"grade": cmd_grade, "grade-all": cmd_grade_all, "check": cmd_check, "release": cmd_release,
            "keygen": cmd_keygen, "gradescope": cmd_gradescope, "merge": cmd_merge, "export": cmd_export,
            "override": cmd_override, "ci": cmd_ci, "new-exercise": cmd_new_exercise}


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; returns its exit status. ``own_process``: this process is the command's alone
    (the console entry point), so it may end early (a config problem found while torch loads); a caller
    in-process (a test, a library) always gets the status back."""
    args = build_parser().parse_args(argv)
    args.own_process = own_process
    return COMMANDS[args.command](args)


def run() -> None:
    """The console entry point: exit without tearing torch's modules down (~0.5 s); Ctrl-C is one line and
    exit 130, whenever it comes.

    Everything the command writes is closed and flushed by then, and its
    worker server has exited; only the interpreter's own clean-up is skipped.
    """
    try:
        code = main(own_process=True)
    except KeyboardInterrupt:  # Ctrl-C where no command stops on its own (grade-all does): one line, no traceback
        code = fail("interrupted", EXIT_STOPPED)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
