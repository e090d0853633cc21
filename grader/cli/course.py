"""The course staff's other verbs: release, keygen, gradescope, export, ci, new-exercise."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader.exits import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK
from grader.cli.shared import fail, guarded, missing_module, chosen_view
from grader.words import count

if TYPE_CHECKING:
    from grader.export.gradebook import Row


def cmd_release(args: argparse.Namespace) -> int:
    try:
        from grader.release import bundle
    except ModuleNotFoundError as exc:
        return fail(missing_module(exc, "`grader release` is for course staff: this student kit cannot build a release"))
    from grader.config import DEFAULT_CONFIG, ConfigError

    def release() -> int:
        key = bundle.read_hidden_key(args.out, args.hidden_key_file, args.hidden_key_env)
        done = bundle.build_release(args.out, args.assignment, args.config or DEFAULT_CONFIG, hidden_key=key,
                                    classroom=args.classroom)
        hidden = f", hidden checks encrypted in {bundle.hidden_bundle.BUNDLE}" if key is not None else ""
        sys.stdout.write(f"released {count(len(done.files), 'file')} into {done.out} (manifest: {bundle.MANIFEST}{hidden})\n")
        return EXIT_OK

    return guarded(release, (ConfigError, bundle.ReleaseError), lambda exc: f"cannot write {args.out}: {exc.strerror or exc}")


# What `grader keygen` tells staff on stderr: the recommended set-up of docs/platforms.md, its commands verbatim
# (tests/test_help_matches_readme.py holds them to that page), and the organisation secret only as its opt-in.
KEY_ADVICE = """Keep this key secret; it opens the hidden checks of every release made with it.
Recommended (docs/platforms.md: "Grading where students cannot reach the key"): release the students' template
without it, and a private grading repository that students cannot push to with it:
  grader release --out student-template
  grader release --out attention-grading --hidden-key-file key.txt
and store it as the secret GRADER_HIDDEN_KEY of that repository's environment `grading`:
  gh secret set GRADER_HIDDEN_KEY --env grading < key.txt
An organisation secret for the students' own repositories is an opt-in (docs/platforms.md: "Opting in"): every
student can then read the key, and the hidden checks with it.
Keep key.txt outside the release folder and out of every repository.
"""


def cmd_keygen(args: argparse.Namespace) -> int:
    """The key on stdout, alone on its line (``grader keygen > key.txt``); the advice on stderr."""
    try:
        from grader.release import hidden_bundle
    except ModuleNotFoundError as exc:
        return fail(missing_module(exc, "`grader keygen` is for course staff: run it from the course repository"))
    sys.stdout.write(hidden_bundle.new_key() + "\n")
    sys.stderr.write(KEY_ADVICE)
    return EXIT_OK


def cmd_gradescope(args: argparse.Namespace) -> int:
    try:
        from grader.release import gradescope
    except ModuleNotFoundError:
        return fail("`grader gradescope` is for course staff: build the autograder from the course repository")
    from grader.config import DEFAULT_CONFIG, ConfigError

    def build() -> int:
        ids = [args.assignment] if args.assignment else None
        out = gradescope.build_autograder(args.out, ids, args.config or DEFAULT_CONFIG)
        sys.stdout.write(f"wrote {out}: upload it as the autograder of the Gradescope programming assignment\n")
        return EXIT_OK

    return guarded(build, (ConfigError, gradescope.GradescopeError),
                    lambda exc: f"cannot write {args.out}: {exc.strerror or exc}")


def cmd_export(args: argparse.Namespace) -> int:
    if (view := chosen_view(args, args.format in ("html", "pytest-json"))) is None:
        return EXIT_BAD_INPUT
    from grader.export import command as exports
    from grader.coursedata.roster import RosterError

    try:
        notes = exports.export(args.format, args.cards, args.out, roster=args.roster, title=args.title, view=view,
                               config=args.config, worksheet=args.worksheet, scale=args.scale,
                               grade_all=_grade_all_folder)
    except (exports.ExportError, RosterError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    for note in notes:  # canvas, moodle: who the file leaves as the LMS has them (an error is no grade), and why
        sys.stderr.write(f"grader: {note}\n")
    return EXIT_OK


def _grade_all_folder(folder: Path) -> tuple[list[Row], str]:
    """A grade-all output folder's rows and assignment, for ``export canvas|moodle FOLDER``. Export imports
    nothing of the batch (the batch stands on it): the CLI, above both, hands it the batch's reader. The
    batch's modules load here, on first use: the other formats never need them."""
    from grader.batch.layout import read_folder

    return read_folder(folder)


def cmd_ci(args: argparse.Namespace) -> int:
    """``grader ci``: 0 the score meets --threshold and the protected files are as released, 1 otherwise,
    2 bad input, 3 the grader could not grade. Its one-line errors are made inert (``ci.inert``): on
    GitHub a line of the log can be a workflow command, and a message may quote what a file holds."""
    from grader import ci

    options = ci.Options(args.root, args.threshold, args.classroom, args.junit, args.out, args.all)
    try:
        return ci.run(options, os.environ, Path.cwd(), sys.stdout)
    except ci.CIError as exc:
        return fail(ci.inert(str(exc)))
    except ci.CIInternalError as exc:
        return fail(f"internal error: {ci.inert(str(exc))}", EXIT_INTERNAL)
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return fail(f"internal error: {type(exc).__name__}: {ci.inert(str(exc))}", EXIT_INTERNAL)


def cmd_new_exercise(args: argparse.Namespace) -> int:
    from grader.authoring import new_exercise

    return new_exercise.command(args.name, args.assignment, args.like, signature=args.signature)
