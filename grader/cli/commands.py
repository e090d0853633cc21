"""The verbs and the one function that runs a command line: ``main`` parses it and calls the verb's ``cmd_*``.

Imported by ``grader.cli.run`` only once its Ctrl-C handling is in place (see ``grader/cli/__init__.py``)."""

from __future__ import annotations

from grader.cli.course import cmd_ci, cmd_export, cmd_gradescope, cmd_keygen, cmd_new_exercise, cmd_release
from grader.cli.grading import cmd_check, cmd_grade, cmd_grade_all, cmd_merge, cmd_override
from grader.cli.parser import REPORT_FORMATS, REPORT_VIEWS, build_parser  # noqa: F401 - the CLI's API

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
