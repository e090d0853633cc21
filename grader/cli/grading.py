"""The grading verbs: grade, check, grade-all, merge, override."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from grader.exits import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_STOPPED
from grader.sandbox.launcher import WorkerServer
from grader.cli.shared import fail, guarded, say, similarity_threshold, chosen_view, with_server
from grader.words import count


def linux_only(command: str) -> str | None:
    """Why ``command`` (course grading: grade, grade-all) cannot run on this system; None on Linux.

    Grading for marks must run with every isolation layer, and those are Linux's (namespaces, landlock,
    seccomp); a student's ``grader check`` runs anywhere, with the layers the system has."""
    if sys.platform.startswith("linux"):
        return None
    return (f"`grader {command}` runs only on Linux (grading for marks needs Linux's sandbox layers); "
            f"on {sys.platform} use `grader check FILE` to run the visible checks")


def cmd_grade(args: argparse.Namespace) -> int:
    if (problem := linux_only("grade")) is not None:
        return fail(problem)
    if chosen_view(args, args.report is not None) is None:
        return EXIT_BAD_INPUT
    if args.report == "html" and args.out.suffix == ".html":
        return fail(f"--out {args.out} ends in .html: the HTML page goes beside the card, so give the card "
                     "another name (e.g. card.json)")
    if _is_zip(args.submission):
        name = args.submission.name
        return fail(f"{name} is a zip archive: `grader grade` takes one .py or .ipynb file; "
                     f"use `grader grade-all {name}` for a class")
    return with_server(args, _grade)


ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")  # a member, an empty archive, a spanned one


def _is_zip(path: Path) -> bool:
    """A zip archive, whatever its name: read as Python it would be graded as a file of gibberish.

    Told by its first bytes (and zipfile's own look at its end, for a zip behind a prefix), so a
    ``week3.py`` that is really a zip is refused too. Any other file, of any name, is graded as
    Python (a notebook when it ends in .ipynb); one that cannot be read is refused later.
    """
    import zipfile

    try:
        with path.open("rb") as f:
            head = f.read(4)
        return head in ZIP_MAGIC or zipfile.is_zipfile(path)
    except OSError:
        return False


def _grade(args: argparse.Namespace, server: WorkerServer) -> int:
    from grader import api, scorecard
    from grader.config import DEFAULT_CONFIG, ConfigError
    from grader.export import text
    from grader.submission import UnreadableSubmission

    try:
        with api.Grader(args.assignment, config_path=args.config or DEFAULT_CONFIG, server=server,
                        strict=args.strict, course_secret_file=args.course_secret_file) as grader:
            card = grader.grade(args.submission, args.student)
    except (ConfigError, UnreadableSubmission, api.StrictModeRefused, api.SecretsExposed) as exc:
        return fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    try:
        scorecard.write(card, args.out)
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    if args.report == "html":
        from grader.export import html

        page = args.out.with_suffix(".html")
        try:
            html.write(card, page, view=args.view or "student")
        except OSError as exc:
            return fail(f"cannot write {page}: {exc.strerror or exc}")
    if args.report == "pytest-json":
        from grader.export import pytest_json

        report = pytest_json.report_path(args.out)
        try:
            pytest_json.write(card, report, view=args.view or "student")
        except OSError as exc:
            return fail(f"cannot write {report}: {exc.strerror or exc}")
    if args.format == "text":
        sys.stdout.write(text.render(card))
    elif args.format == "json":
        sys.stdout.write(card.to_json())
    if card.grader_error:
        return fail(f"internal error: {card.grader_error} (card written to {args.out})", EXIT_INTERNAL)
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    return with_server(args, _check)


def _check(args: argparse.Namespace, server: WorkerServer) -> int:
    from grader import api, scorecard, selfcheck
    from grader.config import DEFAULT_CONFIG, ConfigError, load_config
    from grader.submission import UnreadableSubmission

    try:
        config_path = args.config or DEFAULT_CONFIG
        assignment = selfcheck.assignment_for(args.submission, load_config(config_path), args.assignment)
        with api.Grader(assignment.id, config_path=config_path, server=server, visible_only=True) as grader:
            def run_once() -> int:
                card = grader.grade(args.submission)
                if args.out:
                    scorecard.write(card, args.out)
                sys.stdout.write(selfcheck.render(card, grader.hidden_checks, verbose=args.verbose))
                sys.stdout.flush()
                return EXIT_INTERNAL if card.grader_error else selfcheck.exit_code(card)
            return selfcheck.watch(args.submission, run_once) if args.watch else run_once()
    except (ConfigError, UnreadableSubmission, selfcheck.UnknownAssignment, api.SecretsExposed) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)


def cmd_grade_all(args: argparse.Namespace) -> int:
    if (problem := linux_only("grade-all")) is not None:
        return fail(problem)
    if chosen_view(args, args.report is not None) is None:
        return EXIT_BAD_INPUT
    from grader.batch import fork_server

    fork_server.start_zygote()  # torch loads for the grader processes while this one reads the class
    try:
        return _grade_all(args)
    finally:
        fork_server.stop_zygote(kill=True)  # the pool stopped it; still there only if nothing was graded


def _grade_all(args: argparse.Namespace) -> int:
    from grader import seeds
    from grader.batch import changes, intake
    from grader.batch.pool import BatchStopped
    from grader.batch.run import BatchOptions, grade_all
    from grader.config import DEFAULT_CONFIG, ConfigError, load_config
    from grader.batch.progress import Progress
    from grader.coursedata.roster import RosterError, load_roster

    try:
        config_path = args.config or DEFAULT_CONFIG
        assignment = load_config(config_path).assignment(args.assignment)
        shard = intake.parse_shard(args.shard) if args.shard else None
        roster = load_roster(args.roster) if args.roster else None
        options = BatchOptions(args.submissions, args.assignment, args.out, config_path, args.jobs,
                               roster.entries if roster else None, args.force, shard, args.strict,
                               similarity_threshold(args), report=args.report, view=args.view or "student",
                               layout=args.layout, say=say, roster_line=roster.line() if roster else "",
                               dry_run=args.dry_run, course_secret_file=args.course_secret_file,
                               **_late_inputs(args, assignment))
        progress = Progress(bar={"auto": None, "bar": True, "lines": False}[args.progress])
        result = grade_all(options, assignment, progress)
    except (ConfigError, RosterError, intake.IntakeError, seeds.SecretError, ValueError) as exc:
        return fail(str(exc))
    except BatchStopped as exc:
        return fail(f"stopped: {exc}", exc.exit_code)
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    sys.stderr.write(f"{result.counts.line()}\n")
    for row in result.rows:
        if row.status == "error":
            sys.stderr.write(f"  error: {row.student}: {row.message}\n")
    if args.dry_run:
        shown = [f"dry run: nothing written in {args.out}", *changes.lines(result.changes, result.compared)]
        sys.stdout.write("\n".join(shown) + "\n")
    else:
        if result.compared:
            changed = f"{len(result.changes)} score(s) changed" if result.changes else changes.NOTHING
            sys.stderr.write(f"{changed}: {args.out / changes.FILE_NAME}\n")
        else:
            sys.stderr.write("first grading in this folder: no earlier scores to compare\n")
        sys.stdout.write(f"gradebook: {args.out / 'gradebook.csv'}\n")
    if result.stopped:
        return fail("interrupted; run the same command again to grade the rest", EXIT_STOPPED)
    return EXIT_INTERNAL if result.counts.grader_errors else EXIT_OK


def _late_inputs(args: argparse.Namespace, assignment: Any) -> dict[str, Any]:
    """grade-all's submission times and extensions, read and checked before grading (grader.deadlines;
    a bad row is one line naming the file and line, exit 2)."""
    from grader import deadlines

    policy = assignment.deadline
    given = [flag for flag, value in (("--submitted-at", args.submitted_at), ("--submitted-at-csv",
             args.submitted_at_csv), ("--extensions", args.extensions)) if value]
    if policy is None:
        if given:
            raise ValueError(f"{given[0]}: assignment {assignment.id!r} has no deadline: in assignments.yaml")
        return {}
    extensions = args.extensions or assignment.extensions
    return {
        "submitted_at": deadlines.load_submission_times(args.submitted_at_csv, policy.timezone)
        if args.submitted_at_csv else {},
        "submitted_at_all": _flag_time("--submitted-at", args.submitted_at, policy.timezone)
        if args.submitted_at else None,
        "extensions": deadlines.load_extensions(extensions, policy.timezone) if extensions else {},
    }


def _flag_time(flag: str, text: str, tz: str) -> Any:
    from grader import deadlines

    try:
        return deadlines.parse_time(text, tz)
    except deadlines.DeadlineError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def cmd_merge(args: argparse.Namespace) -> int:
    from grader.batch.merge import MergeError, merge as merge_folders

    def merge() -> int:
        rows = merge_folders(args.dirs, args.out, similarity_threshold(args))
        sys.stdout.write(f"merged {count(len(rows), 'student')} from {count(len(args.dirs), 'folder')} "
                         f"into {args.out / 'gradebook.csv'}\n")
        return EXIT_OK

    return guarded(merge, (MergeError,), lambda exc: f"cannot merge: {exc.strerror or exc}: {exc.filename or ''}")


def cmd_override(args: argparse.Namespace) -> int:
    """``grader override``: one entry appended to COURSE/overrides.jsonl and one line to its audit; applied
    by the next grade-all or merge. Any problem is one line and exit 2."""
    from grader.batch import overrides

    def add() -> int:
        entry, old = overrides.add(args.course, args.student, args.exercise, args.check, args.points, args.reason,
                                   args.by)
        sys.stdout.write(f"override added: {entry.student} {entry.target} {old:g} -> {entry.points:g} "
                         f"({args.course / overrides.OVERRIDES}); grade-all or merge applies it\n")
        return EXIT_OK

    return guarded(add, (overrides.OverridesError,), lambda exc: f"cannot write {args.course}: {exc.strerror or exc}")
