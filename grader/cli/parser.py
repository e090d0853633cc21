"""The command line's arguments: every verb, its flags and their checks (one line and exit 2 for a bad one)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

from grader.deadlines import EXTENSION_COLUMNS, EXTENSION_MOVES
from grader.exits import EXIT_BAD_INPUT


LMS_LAYOUTS = ("canvas", "gradescope", "moodle", "classroom", "folders")  # grader.coursedata.lms.LAYOUTS (not imported: PyYAML)


EXPORT_FORMATS = ("gradebook", "canvas", "moodle", "junit", "gradescope", "html", "pytest-json")


REPORT_FORMATS = ("html", "pytest-json")  # grader.export.html.REPORT_FORMATS (not imported here: it loads Jinja)


SUBMISSIONS_PER_PROCESS = 2  # grader.batch.run.SUBMISSIONS_PER_PROCESS (not imported: it loads the batch machinery)


REPORT_VIEWS = ("student", "instructor")  # grader.export.html.VIEWS, grader.export.pytest_json.VIEWS


VIEW_HELP = ("html, pytest-json: what the page or report shows: 'student' (default) keeps only the status and "
             "points of hidden checks, 'instructor' shows everything, printed output and flags included")


class _Parser(argparse.ArgumentParser):
    """One line and exit 2 for any bad argument; a flag the verb does not have is named, with the closest
    it does have. argparse itself checks the required flags first, so ``--assigment`` alone would read
    "the following arguments are required: --assignment", which hides the typo (Python 3.11 here: no
    ``suggest_on_error``, which 3.14 adds only for choices)."""

    _seen: tuple[str, ...] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._seen = tuple(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(args, namespace)
        if (unknown := self._unknown_flag(extras)) is not None:
            self.error(unknown)
        return parsed, extras

    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        message = self._unknown_flag(self._seen) or message
        sys.stderr.write(f"grader: {message}\n")
        sys.exit(EXIT_BAD_INPUT)

    def _unknown_flag(self, tokens: Any) -> str | None:
        """``unknown flag --assigment; did you mean --assignment?`` for the first flag among ``tokens`` that
        this verb has not (nor abbreviates); None when there is none. The top level (which has verbs, not
        flags) leaves them to its verb."""
        if self._subparsers is not None:
            return None
        known = list(self._option_string_actions)
        for token in tokens:
            if token == "--":
                break
            flag = str(token).split("=", 1)[0]
            if not flag.startswith("-") or len(flag) < 2 or self._negative_number_matcher.match(flag):
                continue
            if flag in known or (flag.startswith("--") and any(k.startswith(flag) for k in known)):
                continue
            close = difflib.get_close_matches(flag, [k for k in known if k.startswith("--")], n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"`grader {self.prog.split()[-1]} --help` lists them"
            return f"unknown flag {flag}; {hint}"
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grader", description="Grade 'attention from scratch' submissions.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser("grade", help="grade one .py or .ipynb file and write a JSON scorecard")
    g.add_argument("submission", type=Path)
    g.add_argument("--assignment", required=True, help="assignment id from assignments.yaml")
    g.add_argument("--out", type=Path, required=True, help="where to write the JSON scorecard")
    g.add_argument("--format", choices=("text", "json", "none"), default="text", help="what to print on stdout (default: text)")
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
    a.add_argument("--jobs", type=_positive,
                   help=f"grader processes grading at once (default: one per {SUBMISSIONS_PER_PROCESS} submissions "
                        "still to grade, at most one per core: each costs time to start)")
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
                   help=f"the late policy: a CSV of {','.join(EXTENSION_COLUMNS)} (one of "
                        f"{', '.join(EXTENSION_MOVES[:-1])} and {EXTENSION_MOVES[-1]} per row); default: the "
                        "config's extensions: file")

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

    sub.add_parser("keygen", help="course staff: print a new key for the hidden checks (keep it from "
                                  "students: the environment secret GRADER_HIDDEN_KEY of a private grading "
                                  "repository, as the docs' recommended set-up)")

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
                   "canvas, moodle: or one grade-all output folder, whose records include the error students")
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--roster", type=Path, help="canvas: the roster CSV with canvas_id (and sis_user_id...) columns")
    e.add_argument("--title", help="canvas: the assignment's name in Canvas (default: the card's assignment id)")
    e.add_argument("--worksheet", type=Path, help="moodle: the assignment's grading worksheet as Moodle wrote it "
                   "(View all submissions -> Download grading worksheet); --out is that worksheet, filled in")
    e.add_argument("--scale", action="store_true", help="moodle: when the worksheet's Maximum grade is not the "
                   "cards' maximum, write each score scaled to it instead of refusing")
    e.add_argument("--config", type=Path, help="gradescope: the assignments.yaml whose gradescope_visibility applies "
                   "(default: the course's own, when it has the cards' assignment)")
    e.add_argument("--view", choices=REPORT_VIEWS, help=VIEW_HELP + "; html writes one page per card into the "
                   "--out folder, named after the card")

    n = sub.add_parser("new-exercise", help="course staff: write every placeholder of a new exercise, modelled on "
                                            "an existing one (docs/adding-an-exercise.md)")
    n.add_argument("name", help="the new function's (or class's) name, a Python identifier")
    n.add_argument("--assignment", required=True)
    n.add_argument("--like", required=True, help="the existing exercise whose signature and shared checks it copies")
    n.add_argument("--signature", help='a function\'s own parameters and return annotation, e.g. "q_new: torch.Tensor, '
                                       'k_cache: torch.Tensor -> torch.Tensor" (default: the --like exercise\'s); then '
                                       'only what fits it is copied')
    return parser


def _parsed(text: str, parse: Callable[[str], Any], noun: str) -> Any:
    try:
        return parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None


def _positive(text: str) -> int:
    value = _parsed(text, int, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _fraction(text: str) -> float:
    value = _parsed(text, float, "a number")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _percent(text: str) -> float:
    value = _parsed(text.removesuffix("%"), float, "a percentage")
    if not 0.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 100")
    return value
