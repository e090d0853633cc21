"""What every command shares: the one-line failure, the worker server started first, the --view rule,
known errors turned into one line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from grader.exits import EXIT_BAD_INPUT, EXIT_INTERNAL
from grader.sandbox.launcher import WorkerServer


def fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    sys.stderr.write(f"grader: {message}\n")
    return code


def with_server(args: argparse.Namespace, command: Callable[[argparse.Namespace, WorkerServer], int]) -> int:
    """Check the submission exists, start the worker server first (its `import torch` overlaps the
    command's own), run the command, and always stop the server."""
    if not args.submission.is_file():
        return fail(f"cannot read {args.submission}: no such file")
    if (problem := config_problem_elsewhere(args)) is not None:
        return fail(problem)
    try:
        server = WorkerServer.forked()  # torch once, shared with the server; nothing secret loaded yet
    except OSError as exc:
        return fail(f"internal error: cannot start the worker server: {exc}", EXIT_INTERNAL)
    try:
        return command(args, server)
    finally:
        server.close()


def config_problem_elsewhere(args: argparse.Namespace) -> str | None:
    """``config_problem``, found by a short-lived fork of this process, so that this one has read nothing
    of the course's config when it forks the worker server (which must hold none of it: the config names
    the hidden checks). Bad input is still refused before torch is imported. In this process where it
    cannot fork."""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return config_problem(args)
    if pid == 0:  # the fork: answer and leave, whatever happens
        code = 1
        try:
            os.close(read)
            os.write(write, (config_problem(args) or "").encode("utf-8", "replace"))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        text = answer.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return config_problem(args)  # the fork failed to answer: ask here (then the server starts as a fresh one)
    return text or None


def config_problem(args: argparse.Namespace) -> str | None:
    """The config and the assignment, checked before the worker server starts (no torch is imported
    for them): bad input is refused at once. ``check`` infers the assignment from the file's name."""
    from grader import selfcheck
    from grader.config import DEFAULT_CONFIG, ConfigError, load_config

    try:
        config = load_config(args.config or DEFAULT_CONFIG)
        if args.command == "check":
            selfcheck.assignment_for(args.submission, config, args.assignment)
        else:
            config.assignment(args.assignment)
    except (ConfigError, selfcheck.UnknownAssignment) as exc:
        return str(exc)
    return None


def chosen_view(args: argparse.Namespace, wanted: bool) -> str | None:
    """Which view the page gets; None after writing the one-line complaint when --view came alone."""
    if args.view is not None and not wanted:
        fail("--view applies to HTML pages only (and pytest-json reports): add --report html or pytest-json "
              "(export: those formats)")
        return None
    return args.view or "student"


def guarded(action: Callable[[], int], known: tuple[type[Exception], ...], cannot: Callable[[OSError], str]) -> int:
    """Run ``action``; a known problem or an OSError is one line and exit 2, anything else exit 3."""
    try:
        return action()
    except known as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(cannot(exc))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)


def say(line: str) -> None:
    """What grade-all tells staff before grading (the roster's and the download's layout): stderr, one line."""
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def similarity_threshold(args: argparse.Namespace) -> float:
    from grader.batch.similarity import DEFAULT_THRESHOLD

    return DEFAULT_THRESHOLD if args.similarity_threshold is None else args.similarity_threshold


def missing_module(exc: ModuleNotFoundError, in_kit: str) -> str:
    """What a failed import of a staff-only module means: the student kit (no ``grader.release``) or a
    dependency not installed, which would otherwise read as the kit's message."""
    if (exc.name or "").startswith("grader"):
        return in_kit
    return f"cannot run: the package {exc.name!r} is not installed (pip install -r requirements.txt)"
