"""What every command shares: the one-line failure, the worker server started first, the --view rule,
known errors turned into one line."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Callable

from grader.exits import EXIT_BAD_INPUT, EXIT_INTERNAL
from grader.sandbox.launcher import AnyServer, start_server


def fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    sys.stderr.write(f"grader: {message}\n")
    return code


def with_server(args: argparse.Namespace, command: Callable[[argparse.Namespace, AnyServer], int]) -> int:
    """Check the submission exists, start the worker server first (its `import torch` overlaps the
    command's own), run the command, and always stop the server."""
    if args.submission.is_dir():
        return fail(folder_given(args.command, args.submission, getattr(args, "assignment", None)))
    if not args.submission.is_file():
        return fail(f"cannot read {args.submission}: no such file")
    check = ConfigCheck(args, exit_at_once=args.own_process)
    from grader.sandbox import server as _  # noqa: F401 - torch, while the fork checks the config beside it

    if (problem := check.answer()) is not None:
        return fail(problem)
    try:
        server = start_server()  # torch once, shared with a forked server; nothing secret loaded yet
    except OSError as exc:
        return fail(f"internal error: cannot start the worker server: {exc}", EXIT_INTERNAL)
    try:
        return command(args, server)
    finally:
        server.close()


def folder_given(command: str, folder: Path, assignment: str | None) -> str:
    """One line for ``grader grade FOLDER`` / ``grader check FOLDER``: both take one file, and a folder
    is not "no such file" (it exists). ``grade`` points at ``grade-all``, which grades a class;
    ``check`` (a student's own file) names the file to give when the folder's top holds one."""
    if command == "grade":
        return (f"{folder} is a folder: `grader grade` grades one .py or .ipynb file; `grader grade-all {folder} "
                f"--assignment {assignment or 'ID'} --out DIR` grades a class")
    try:
        files = sorted(p.name for p in folder.iterdir() if p.suffix in (".py", ".ipynb") and p.is_file())
    except OSError:  # an unreadable folder: the line still says what to give
        files = []
    example = f", e.g. `grader check {folder / files[0]}`" if len(files) == 1 else ""
    return f"{folder} is a folder: `grader check` checks one .py or .ipynb file; name the file{example}"


class ConfigCheck:
    """``config_problem``, answered by a short-lived fork of this process while this one imports torch.

    The fork is made before torch is imported, so it is cheap, and it reads the course's config so that
    this process has read nothing of it when it forks the worker server (which must hold none of it: the
    config names the hidden checks). The two run side by side: a cold ``grader grade`` no longer waits
    for the config before it starts on torch. With ``exit_at_once`` (the console command, whose process
    this is) bad input is still refused at once: the thread that waits for the fork's answer writes the
    one line and ends the process as soon as it comes, torch imported or not. Otherwise (a caller
    in-process) ``answer`` returns the line once torch is imported. Where this process cannot fork, or
    the fork fails to answer, the question is asked here.
    """

    def __init__(self, args: argparse.Namespace, exit_at_once: bool) -> None:
        self._args, self._exit_at_once = args, exit_at_once
        self._text: str | None = None  # the fork's answer ("" when all is well); None until it came
        self._waiter: threading.Thread | None = None
        if not hasattr(os, "fork"):  # Windows: asked here, while nothing else runs
            self._text = config_problem(args) or ""
            return
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            self._text = config_problem(args) or ""
            return
        if pid == 0:  # the fork: answer and leave, whatever happens
            code = 1
            try:
                os.close(read)
                os.write(write, (config_problem(args) or "").encode("utf-8", "replace"))
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._waiter = threading.Thread(target=self._wait, args=(pid, read), name="config-check", daemon=True)
        self._waiter.start()

    def _wait(self, pid: int, read: int) -> None:
        with os.fdopen(read, "rb") as answer:
            text = answer.read().decode("utf-8", "replace")
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return  # the fork failed to answer: ``answer`` asks in this process
        self._text = text
        if text and self._exit_at_once:
            code = fail(text)
            sys.stderr.flush()
            os._exit(code)  # refused at once, even halfway through importing torch

    def answer(self) -> str | None:
        """None when the config and the assignment are fine; otherwise the one line to print."""
        if self._waiter is not None:
            self._waiter.join()
        if self._text is None:  # the fork failed to answer: ask here (then the server starts as a fresh one)
            return config_problem(self._args)
        return self._text or None


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
