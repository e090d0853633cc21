"""Command line: a thin layer over ``grader.api`` and ``grader.batch``, and the only place that exits.

Exit codes: 0 graded (however badly the submission did; ``check``: every
visible check passed; ``ci``: the score meets ``--threshold`` and the protected
files are as released); 1 ``check``: some visible check failed, ``ci``: under
the threshold or protected files changed; 2 the grader could
not grade (bad arguments, unknown assignment, unreadable file, bad config,
``--strict`` refused); 3 the grader's own internal error (a card with
``grader_error`` is still written when possible; ``grade-all``: on some
submission, whose row says so); 130 ``grade-all`` was stopped by Ctrl-C or
SIGTERM (whatever finished is kept; run it again to finish the rest).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable

from grader.sandbox.launcher import WorkerServer

EXIT_OK, EXIT_CANNOT_GRADE, EXIT_INTERNAL, EXIT_STOPPED = 0, 2, 3, 130
LMS_LAYOUTS = ("canvas", "gradescope", "moodle", "classroom", "folders")  # grader.batch.lms.LAYOUTS (not imported: PyYAML)
EXPORT_FORMATS = ("gradebook", "canvas", "junit", "gradescope", "html", "pytest-json")
REPORT_FORMATS = ("html", "pytest-json")  # grader.export.html.REPORT_FORMATS (not imported here: it loads Jinja)
REPORT_VIEWS = ("student", "instructor")  # grader.export.html.VIEWS, grader.export.pytest_json.VIEWS
VIEW_HELP = ("html, pytest-json: what the page or report shows: 'student' (default) keeps only the status and "
             "points of hidden checks, 'instructor' shows everything, printed output and flags included")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        sys.stderr.write(f"grader: {message}\n")
        sys.exit(EXIT_CANNOT_GRADE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grader", description="Grade 'attention from scratch' submissions.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser("grade", help="grade one .py or .ipynb file and write a JSON scorecard")
    g.add_argument("submission", type=Path)
    g.add_argument("--assignment", required=True, help="assignment id from assignments.yaml")
    g.add_argument("--out", type=Path, required=True, help="where to write the JSON scorecard")
    g.add_argument("--format", choices=("text", "json", "none"), default="text", help="what to print on stdout")
    g.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's own)")
    g.add_argument("--strict", action="store_true", help="refuse to grade unless every isolation layer is active")
    g.add_argument("--report", choices=REPORT_FORMATS,
                   help="also write beside the card a self-contained HTML feedback page (html: --out CARD.json "
                        "writes CARD.html, so --out may not end in .html) or pytest-json-report's JSON "
                        "(pytest-json: CARD.report.json)")
    g.add_argument("--view", choices=REPORT_VIEWS, help=VIEW_HELP)
    g.add_argument("--student", help="the student's id: with a course secret, their hidden checks get inputs of "
                                     "their own (default: the file's name without its suffix)")
    g.add_argument("--course-secret-file", type=Path,
                   help="the course secret that gives each student their own hidden inputs "
                        "(default: $GRADER_COURSE_SECRET, else course_secret_file: in assignments.yaml)")

    a = sub.add_parser("grade-all", help="grade a folder or .zip of a whole class: cards, gradebook.csv, summary.json")
    a.add_argument("submissions", type=Path, help="a folder of student folders or files, or a .zip of one")
    a.add_argument("--assignment", required=True, help="assignment id from assignments.yaml")
    a.add_argument("--out", type=Path, required=True, help="output folder (cards/, records/, gradebook.csv, summary.json)")
    a.add_argument("--jobs", type=_positive, default=os.cpu_count() or 1, help="judges grading at once (default: cores)")
    a.add_argument("--roster", type=Path,
                   help="the class list: a Canvas gradebook export, a Gradescope or Moodle roster, a GitHub Classroom "
                        "roster, or a CSV with a student/id/login/email column; maps LMS ids to it and adds a "
                        "'missing' row for each who submitted nothing")
    a.add_argument("--layout", choices=LMS_LAYOUTS,
                   help="how SUBMISSIONS is laid out: an LMS's bulk download (canvas, gradescope, moodle), GitHub "
                        "Classroom clones (classroom) or a file or folder per student (folders); default: recognised")
    a.add_argument("--force", action="store_true", help="re-grade students whose file, config and grader are unchanged")
    a.add_argument("--shard", help="grade only slice K of N (0 <= K < N) by a stable hash of the student id")
    a.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's own)")
    a.add_argument("--strict", action="store_true", help="refuse to grade unless every isolation layer is active")
    a.add_argument("--progress", choices=("auto", "bar", "lines"), default="auto",
                   help="a bar on a terminal, a line per student otherwise (auto)")
    a.add_argument("--similarity-threshold", type=_fraction, default=None, metavar="0..1",
                   help="similarity.json lists pairs of submissions scoring this or more (default 0.8); "
                        "a review aid, never a penalty")
    a.add_argument("--report", choices=REPORT_FORMATS,
                   help="also write per graded student a feedback page, reports/<student>.html (an unchanged "
                        "student keeps theirs), or pytest-json-report's JSON, reports/<student>.report.json")
    a.add_argument("--view", choices=REPORT_VIEWS, help=VIEW_HELP)
    a.add_argument("--dry-run", action="store_true",
                   help="grade in a scratch copy and print whose score would change (old -> new, which checks); "
                        "nothing is written in --out")
    a.add_argument("--submitted-at", metavar="ISO",
                   help="the late policy: everyone's submission time (ISO 8601; without an offset: in the deadline's "
                        "timezone); wins over the LMS download's times")
    a.add_argument("--submitted-at-csv", type=Path, metavar="FILE",
                   help="the late policy: a CSV of student,submitted_at (or time) per student; wins over "
                        "--submitted-at and the LMS's times")
    a.add_argument("--course-secret-file", type=Path, metavar="FILE",
                   help="the course secret that gives each student their own hidden inputs (default: "
                        "$GRADER_COURSE_SECRET, else course_secret_file: in assignments.yaml); a new secret re-grades all")
    a.add_argument("--extensions", type=Path, metavar="FILE",
                   help="the late policy: a CSV of student,new_due,extra_days,reason (one of new_due and extra_days "
                        "per row); default: the config's extensions: file")

    c = sub.add_parser("check", help="students: run the visible checks on your .py or .ipynb file")
    c.add_argument("submission", type=Path)
    c.add_argument("--assignment", help="assignment id (default: the one whose file has this file's name)")
    c.add_argument("--watch", action="store_true", help="check again every time the file is saved (Ctrl-C stops)")
    c.add_argument("--out", type=Path, help="also write the (visible checks') JSON scorecard here")
    c.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's or the kit's)")
    c.add_argument("-v", "--verbose", action="store_true",
                   help="a notebook: list every demo statement not run when grading (by default, one line counts them)")

    r = sub.add_parser("release", help="course staff: build what students receive (exercises, notebooks, self-check kit)")
    r.add_argument("--out", type=Path, required=True, help="an empty folder, or an earlier release to update")
    r.add_argument("--assignment", action="append", help="release only this assignment (repeatable; default: all)")
    r.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's own)")
    key = r.add_mutually_exclusive_group()
    key.add_argument("--hidden-key-file", type=Path, metavar="FILE",
                     help="add .grader/hidden.bundle: every check and the references, encrypted with the key in "
                          "FILE (from `grader keygen`; keep FILE outside --out), for the repository's CI")
    key.add_argument("--hidden-key-env", metavar="NAME",
                     help="as --hidden-key-file, with the key in the environment variable NAME")
    r.add_argument("--classroom", action="store_true",
                   help="ship GitHub Classroom's autograding workflow (.github/workflows/classroom.yml) "
                        "instead of .github/workflows/autograde.yml")

    sub.add_parser("keygen", help="course staff: print a new key for the hidden checks (store it as the "
                                  "organisation secret GRADER_HIDDEN_KEY)")

    s = sub.add_parser("gradescope", help="course staff: build the autograder zip of a Gradescope programming assignment")
    s.add_argument("--out", type=Path, required=True, help="the zip to write, e.g. autograder.zip")
    s.add_argument("--assignment", help="the assignment (needed when assignments.yaml has several: "
                                        "one zip per Gradescope assignment)")
    s.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's own)")

    o = sub.add_parser("override", help="course staff: set a check's (or an exercise's) points by hand, with a reason; "
                                        "kept through re-grades (overrides.jsonl in the course folder)")
    o.add_argument("student", help="the student's id (their card is cards/STUDENT.json)")
    o.add_argument("--check", help="the check's id (add --exercise when it is in several exercises)")
    o.add_argument("--exercise", help="the exercise: alone, its total is set (spread over its checks by their points)")
    o.add_argument("--points", type=float, required=True,
                   help="the score to give (0 up to the check's or exercise's max)")
    o.add_argument("--reason", required=True, help="why (shown to the student on their card and report)")
    o.add_argument("--by", required=True, help="who decided it")
    o.add_argument("--course", type=Path, default=Path("."),
                   help="the grade-all output folder (--out) holding cards/ and overrides.jsonl (default: here)")

    m = sub.add_parser("merge", help="join grade-all --shard outputs into one gradebook and summary")
    m.add_argument("dirs", type=Path, nargs="+", help="grade-all output folders")
    m.add_argument("--out", type=Path, required=True, help="a new folder for the joined output")
    m.add_argument("--similarity-threshold", type=_fraction, default=None, metavar="0..1",
                   help="similarity.json lists pairs of submissions scoring this or more (default 0.8)")

    ci = sub.add_parser("ci", help="grade a student repository where it is pushed (GitHub Actions, GitHub Classroom, "
                                   "GitLab CI, a shell): reports, annotations, exit status by threshold")
    ci.add_argument("--root", type=Path, help="the student repository (default: GITHUB_WORKSPACE, CI_PROJECT_DIR, "
                                              "or the current folder)")
    ci.add_argument("--threshold", type=_percent, default=0.0, metavar="PERCENT",
                    help="fail (exit 1) when the score is under this percentage (default 0: never on score)")
    ci.add_argument("--classroom", action="store_true",
                    help="GitHub Classroom: also set the step output `result` its autograding reporter reads")
    ci.add_argument("--junit", type=Path, help="write a JUnit report here (on GitLab CI always; default "
                                               "<root>/grader-junit.xml)")
    ci.add_argument("--out", type=Path, help="folder for the student-view cards and HTML pages "
                                             "(default <root>/grader-results)")
    ci.add_argument("--all", action="store_true", help="on a pull request too, grade every submission file, "
                                                       "not only those it changes")

    e = sub.add_parser("export", help="write graded cards in another format")
    e.add_argument("format", choices=EXPORT_FORMATS)
    e.add_argument("cards", type=Path, nargs="+", help="scorecard JSON files (the student id is the file name); "
                   "canvas: or one grade-all output folder, whose records include the error students")
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--roster", type=Path, help="canvas: the roster CSV with canvas_id (and sis_user_id...) columns")
    e.add_argument("--title", help="canvas: the assignment's name in Canvas (default: the card's assignment id)")
    e.add_argument("--config", type=Path, help="gradescope: the assignments.yaml whose gradescope_visibility applies "
                   "(default: the course's own, when it has the cards' assignment)")
    e.add_argument("--view", choices=REPORT_VIEWS, help=VIEW_HELP + "; html writes one page per card into the "
                   "--out folder, named after the card")

    n = sub.add_parser("new-exercise", help="course staff: write every placeholder of a new exercise, modelled on "
                                            "an existing one (docs/adding-an-exercise.md)")
    n.add_argument("name", help="the new function's (or class's) name, a Python identifier")
    n.add_argument("--assignment", required=True)
    n.add_argument("--like", required=True, help="the existing exercise whose signature and shared checks it copies")
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _percent(text: str) -> float:
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if not 0.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 100")
    return value


def _similarity_threshold(args: argparse.Namespace) -> float:
    from grader.batch.similarity import DEFAULT_THRESHOLD

    return DEFAULT_THRESHOLD if args.similarity_threshold is None else args.similarity_threshold


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    commands = {"grade": cmd_grade, "grade-all": cmd_grade_all, "check": cmd_check, "release": cmd_release,
                "keygen": cmd_keygen, "gradescope": cmd_gradescope, "merge": cmd_merge, "export": cmd_export,
                "override": cmd_override, "ci": cmd_ci, "new-exercise": cmd_new_exercise}
    return commands[args.command](args)


def _with_server(args: argparse.Namespace, command: Callable[[argparse.Namespace, WorkerServer], int]) -> int:
    """Check the submission exists, start the worker server first (its `import torch` overlaps the
    command's own), run the command, and always stop the server."""
    if not args.submission.is_file():
        return _fail(f"cannot read {args.submission}: no such file")
    try:
        server = WorkerServer()
    except OSError as exc:
        return _fail(f"internal error: cannot start the worker server: {exc}", EXIT_INTERNAL)
    try:
        return command(args, server)
    finally:
        server.close()


def _view(args: argparse.Namespace, wanted: bool) -> str | None:
    """Which view the page gets; None after writing the one-line complaint when --view came alone."""
    if args.view is not None and not wanted:
        _fail("--view applies to HTML pages only (and pytest-json reports): add --report html or pytest-json "
              "(export: those formats)")
        return None
    return args.view or "student"


def cmd_grade(args: argparse.Namespace) -> int:
    if _view(args, args.report is not None) is None:
        return EXIT_CANNOT_GRADE
    if args.report == "html" and args.out.suffix == ".html":
        return _fail(f"--out {args.out} ends in .html: the HTML page goes beside the card, so give the card "
                     "another name (e.g. card.json)")
    if _is_zip(args.submission):
        name = args.submission.name
        return _fail(f"{name} is a zip archive: `grader grade` takes one .py or .ipynb file; "
                     f"use `grader grade-all {name}` for a class")
    return _with_server(args, _grade)


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
        return _fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    try:
        scorecard.write(card, args.out)
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    if args.report == "html":
        from grader.export import html

        page = args.out.with_suffix(".html")
        try:
            html.write(card, page, view=args.view or "student")
        except OSError as exc:
            return _fail(f"cannot write {page}: {exc.strerror or exc}")
    if args.report == "pytest-json":
        from grader.export import pytest_json

        report = pytest_json.report_path(args.out)
        try:
            pytest_json.write(card, report, view=args.view or "student")
        except OSError as exc:
            return _fail(f"cannot write {report}: {exc.strerror or exc}")
    if args.format == "text":
        sys.stdout.write(text.render(card))
    elif args.format == "json":
        sys.stdout.write(card.to_json())
    if card.grader_error:
        return _fail(f"internal error: {card.grader_error} (card written to {args.out})", EXIT_INTERNAL)
    return EXIT_OK


def cmd_grade_all(args: argparse.Namespace) -> int:
    if _view(args, args.report is not None) is None:
        return EXIT_CANNOT_GRADE
    from grader import batch, seeds
    from grader.batch import changes, intake
    from grader.config import DEFAULT_CONFIG, ConfigError, load_config
    from grader.batch.progress import Progress
    from grader.batch.roster import RosterError, load_roster

    try:
        config_path = args.config or DEFAULT_CONFIG
        assignment = load_config(config_path).assignment(args.assignment)
        shard = intake.parse_shard(args.shard) if args.shard else None
        roster = load_roster(args.roster) if args.roster else None
        options = batch.BatchOptions(args.submissions, args.assignment, args.out, config_path, args.jobs,
                                     roster.entries if roster else None, args.force, shard, args.strict,
                                     _similarity_threshold(args), report=args.report, view=args.view or "student",
                                     layout=args.layout, say=_say, roster_line=roster.line() if roster else "",
                                     dry_run=args.dry_run, course_secret_file=args.course_secret_file,
                                     **_late_inputs(args, assignment))
        progress = Progress(bar={"auto": None, "bar": True, "lines": False}[args.progress])
        result = batch.grade_all(options, assignment, progress)
    except (ConfigError, RosterError, intake.IntakeError, seeds.SecretError, ValueError) as exc:
        return _fail(str(exc))
    except batch.BatchStopped as exc:
        return _fail(f"stopped: {exc}", exc.exit_code)
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
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
        return _fail("interrupted; run the same command again to grade the rest", EXIT_STOPPED)
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


def _say(line: str) -> None:
    """What grade-all tells staff before grading (the roster's and the download's layout): stderr, one line."""
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def cmd_check(args: argparse.Namespace) -> int:
    return _with_server(args, _check)


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
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)


def cmd_release(args: argparse.Namespace) -> int:
    try:
        from grader.release import bundle
    except ModuleNotFoundError as exc:
        return _fail(_missing(exc, "`grader release` is for course staff: this student kit cannot build a release"))
    from grader.config import DEFAULT_CONFIG, ConfigError

    def release() -> int:
        key = bundle.read_hidden_key(args.out, args.hidden_key_file, args.hidden_key_env)
        done = bundle.build_release(args.out, args.assignment, args.config or DEFAULT_CONFIG, hidden_key=key,
                                    classroom=args.classroom)
        hidden = f", hidden checks encrypted in {bundle.hidden_bundle.BUNDLE}" if key is not None else ""
        sys.stdout.write(f"released {len(done.files)} files into {done.out} (manifest: {bundle.MANIFEST}{hidden})\n")
        return EXIT_OK

    return _guarded(release, (ConfigError, bundle.ReleaseError), lambda exc: f"cannot write {args.out}: {exc.strerror or exc}")


KEY_ADVICE = """Keep this key secret; it opens the hidden checks of every release made with it.
Store it as an organisation secret named GRADER_HIDDEN_KEY (Organisation settings > Secrets and variables >
Actions > New organization secret, available to the course's repositories), or with the GitHub CLI:
  gh secret set GRADER_HIDDEN_KEY --org YOUR-ORG --visibility all < key.txt
Then release with it: grader release --out student-template --hidden-key-file key.txt
Keep key.txt outside the release folder and out of every repository.
"""


def cmd_keygen(args: argparse.Namespace) -> int:
    """The key on stdout, alone on its line (``grader keygen > key.txt``); the advice on stderr."""
    try:
        from grader.release import hidden_bundle
    except ModuleNotFoundError as exc:
        return _fail(_missing(exc, "`grader keygen` is for course staff: run it from the course repository"))
    sys.stdout.write(hidden_bundle.new_key() + "\n")
    sys.stderr.write(KEY_ADVICE)
    return EXIT_OK


def cmd_gradescope(args: argparse.Namespace) -> int:
    try:
        from grader.release import gradescope
    except ModuleNotFoundError:
        return _fail("`grader gradescope` is for course staff: build the autograder from the course repository")
    from grader.config import DEFAULT_CONFIG, ConfigError

    def build() -> int:
        ids = [args.assignment] if args.assignment else None
        out = gradescope.build_autograder(args.out, ids, args.config or DEFAULT_CONFIG)
        sys.stdout.write(f"wrote {out}: upload it as the autograder of the Gradescope programming assignment\n")
        return EXIT_OK

    return _guarded(build, (ConfigError, gradescope.GradescopeError),
                    lambda exc: f"cannot write {args.out}: {exc.strerror or exc}")


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

    return _guarded(add, (overrides.OverridesError,), lambda exc: f"cannot write {args.course}: {exc.strerror or exc}")


def cmd_merge(args: argparse.Namespace) -> int:
    from grader import batch

    def merge() -> int:
        rows = batch.merge(args.dirs, args.out, _similarity_threshold(args))
        sys.stdout.write(f"merged {len(rows)} students from {len(args.dirs)} folders into {args.out / 'gradebook.csv'}\n")
        return EXIT_OK

    return _guarded(merge, (batch.MergeError,), lambda exc: f"cannot merge: {exc.strerror or exc}: {exc.filename or ''}")


def _guarded(action: Callable[[], int], known: tuple[type[Exception], ...], cannot: Callable[[OSError], str]) -> int:
    """Run ``action``; a known problem or an OSError is one line and exit 2, anything else exit 3."""
    try:
        return action()
    except known as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(cannot(exc))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)


def cmd_export(args: argparse.Namespace) -> int:
    if (view := _view(args, args.format in ("html", "pytest-json"))) is None:
        return EXIT_CANNOT_GRADE
    from grader.export import command as exports
    from grader.batch.roster import RosterError

    try:
        left_out = exports.export(args.format, args.cards, args.out, roster=args.roster, title=args.title, view=view,
                                  config=args.config)
    except (exports.ExportError, RosterError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    for row in left_out:  # canvas: as the gradebook, an error is no score; Canvas keeps what it holds
        why = " ".join(row.message.split())
        sys.stderr.write(f"grader: canvas: {row.student} left out (error: {why}); their Canvas grade is unchanged\n")
    return EXIT_OK


def _missing(exc: ModuleNotFoundError, in_kit: str) -> str:
    """What a failed import of a staff-only module means: the student kit (no ``grader.release``) or a
    dependency not installed, which would otherwise read as the kit's message."""
    if (exc.name or "").startswith("grader"):
        return in_kit
    return f"cannot run: the package {exc.name!r} is not installed (pip install -r requirements.txt)"


def cmd_ci(args: argparse.Namespace) -> int:
    """``grader ci``: 0 the score meets --threshold and the protected files are as released, 1 otherwise,
    2 bad input, 3 the grader could not grade. Its one-line errors are made inert (``ci.inert``): on
    GitHub a line of the log can be a workflow command, and a message may quote what a file holds."""
    from grader import ci

    options = ci.Options(args.root, args.threshold, args.classroom, args.junit, args.out, args.all)
    try:
        return ci.run(options, os.environ, Path.cwd(), sys.stdout)
    except ci.CIError as exc:
        return _fail(ci.inert(str(exc)))
    except ci.CIInternalError as exc:
        return _fail(f"internal error: {ci.inert(str(exc))}", EXIT_INTERNAL)
    except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {ci.inert(str(exc))}", EXIT_INTERNAL)


def cmd_new_exercise(args: argparse.Namespace) -> int:
    from grader.authoring import new_exercise

    return new_exercise.command(args.name, args.assignment, args.like)


def _fail(message: str, code: int = EXIT_CANNOT_GRADE) -> int:
    sys.stderr.write(f"grader: {message}\n")
    return code


def run() -> None:
    """The console entry point: exit without tearing torch's modules down (~0.5 s).

    Everything the command writes is closed and flushed by then, and its
    worker server has exited; only the interpreter's own clean-up is skipped.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
