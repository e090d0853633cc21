"""The seed of a student's hidden inputs (``grader.seeds``) reaches course staff only.

With the seed and the checks' source a student could rebuild their hidden
inputs, so it is on the staff's card (``environment.input_seed``) and in the
instructor's view, and nowhere a student reads: not under its own key, not as
its digits in a note or a nested field. One submission is graded once, with a
known course secret; every student-facing output is then drawn from that
card and searched. The formats come from the project's own lists (the CLI's
``EXPORT_FORMATS`` and ``REPORT_FORMATS``, ``views.VIEWS``), so a new one is
searched too.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from dataclasses import dataclass, replace
from io import StringIO
from pathlib import Path
from typing import Any, Iterator

import pytest

from grader import api, batch, ci, cli, seeds
from grader.batch import intake, run as batch_run
from grader.cli.parser import EXPORT_FORMATS
from grader.export import views
from grader.release import gradescope_run
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests.test_ci import parse_outputs

ROOT = Path(__file__).resolve().parents[1]
SECRET = b"tests/test_seed_privacy.py"
ASSIGNMENT = "attention-modules"  # the smaller assignment: its one grading takes seconds
SOURCE = ROOT / "solutions/attention_modules.py"
STUDENT = "alice"
# What each export needs besides cards and --out; a format that needs more fails here, loudly.
EXPORT_ARGS = {"canvas": ("--roster", "{roster}"), "moodle": ("--worksheet", "{worksheet}", "--scale")}
MOODLE_WORKSHEET = ("Identifier,Full name,ID number,Email address,Status,Grade,Maximum grade,Grade can be changed,"
                    "Last modified (grade),Feedback comments\n"
                    "Participant 1,Alice,{student},a@uni.example,Submitted,,100.00,Yes,-,\n")


@dataclass(frozen=True)
class Case:
    """A staff card and the words that must never reach its student (all of them are on the card)."""

    name: str
    card: Scorecard
    secrets: tuple[str, ...]

    def leaks(self, text: str) -> list[str]:
        """The secrets ``text`` holds (none, for anything a student reads)."""
        return [s for s in self.secrets if s in text]


@pytest.fixture(scope="module")
def graded(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> Scorecard:
    """``alice`` graded once with a course secret file, through the session's warm server."""
    folder = tmp_path_factory.mktemp("seed-privacy")
    secret = folder / "course-secret.txt"
    secret.write_bytes(SECRET + b"\n")
    submission = folder / "submission.py"
    shutil.copy(SOURCE, submission)
    with api.Grader(ASSIGNMENT, server=server, course_secret_file=secret) as grader:
        return grader.grade(submission, STUDENT)


def seed_of(card: Scorecard) -> int:
    return int(card.environment["input_seed"])


def quoting(card: Scorecard) -> Scorecard:
    """The card with the seed also quoted in a note and a nested field, as a later version might record it."""
    seed = seed_of(card)
    extra = {"hidden_inputs": {"drawn_from": seed, "how": "HMAC of the course secret"},
             "hidden_inputs_note": f"drawn from seed {seed}", "replay": ["--seed", str(seed)]}
    return replace(card, environment={**card.environment, **extra})


def without_secret(card: Scorecard) -> Scorecard:
    """The card as it reads graded with no course secret: seed 0 and the note that says so."""
    env = {k: v for k, v in card.environment.items() if k not in seeds.HIDDEN_ENVIRONMENT_KEYS}
    return replace(card, environment={**env, **seeds.environment_entries(seeds.NO_SECRET, None)})


CASES = ("secret", "quoted", "no-secret")


@pytest.fixture(scope="module", params=CASES)
def case(request: pytest.FixtureRequest, graded: Scorecard) -> Case:
    seed = str(seed_of(graded))
    if request.param == "secret":
        return Case("secret", graded, ("input_seed", seed))
    if request.param == "quoted":
        return Case("quoted", quoting(graded), ("input_seed", seed))
    return Case("no-secret", without_secret(graded), ("input_seed", seeds.NO_SECRET_NOTE))


@pytest.fixture
def staff_card(case: Case, tmp_path: Path) -> Path:
    """The card as grade-all writes it for staff: ``cards/<student>.json``."""
    path = tmp_path / "cards" / f"{STUDENT}.json"
    path.parent.mkdir()
    path.write_text(case.card.to_json(), encoding="utf-8")
    return path


def texts_under(*paths: Path) -> dict[str, str]:
    """Every file at or under ``paths``, as text, by its path."""
    found = {}
    for path in paths:
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            found[str(file)] = file.read_text(encoding="utf-8", errors="replace")
    return found


def assert_no_leak(case: Case, outputs: dict[str, str]) -> None:
    assert outputs, "nothing was written"
    leaked = {where: case.leaks(text) for where, text in outputs.items() if case.leaks(text)}
    assert not leaked, f"{case.name}: the seed reached a student: {leaked}"


# ------------------------------------------------------------------ the grading and the staff's card


def test_the_card_carries_this_students_seed(graded: Scorecard) -> None:
    seed = seeds.derive(SECRET, ASSIGNMENT, STUDENT)
    assert seed_of(graded) == seed and len(str(seed)) >= 9  # enough digits that finding them means the seed
    assert "input_seed_note" not in graded.environment and graded.score == graded.max_score


def test_the_staff_card_keeps_the_seed(case: Case, staff_card: Path) -> None:
    assert case.leaks(staff_card.read_text(encoding="utf-8")) == list(case.secrets)


def test_the_student_view_drops_the_seed_and_keeps_the_rest(case: Case) -> None:
    shown = views.student_view(case.card)
    assert not case.leaks(shown.to_json())
    assert shown.environment["isolation"] == case.card.environment["isolation"]  # a nested record stays
    assert shown.environment["cuda"] == case.card.environment["cuda"] and shown.score == case.card.score
    if case.name == "quoted":
        assert shown.environment["hidden_inputs"] == {"how": "HMAC of the course secret"}


# ------------------------------------------------------------------ grader export, every format


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_no_export_in_its_default_view_carries_the_seed(case: Case, staff_card: Path, tmp_path: Path,
                                                        fmt: str) -> None:
    """The default view is the student's; the formats without one (gradebook, canvas, junit) go to an
    LMS or a CI page, which students read too."""
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student,canvas_id\n{STUDENT},101\n", encoding="utf-8")
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET.format(student=STUDENT), encoding="utf-8")
    extra = [arg.format(roster=roster, worksheet=worksheet) for arg in EXPORT_ARGS.get(fmt, ())]
    out = tmp_path / "exported"
    assert cli.main(["export", fmt, str(staff_card), "--out", str(out), *extra]) == 0
    assert_no_leak(case, texts_under(out))


@pytest.mark.parametrize("view", views.VIEWS)
@pytest.mark.parametrize("fmt", cli.REPORT_FORMATS)
def test_only_the_instructor_view_of_a_report_carries_the_seed(case: Case, staff_card: Path, tmp_path: Path,
                                                               fmt: str, view: str) -> None:
    out = tmp_path / "exported"
    assert cli.main(["export", fmt, str(staff_card), "--out", str(out), "--view", view]) == 0
    outputs = texts_under(out)
    if view == "instructor":  # the search finds the seed where it may be: it would find it anywhere else
        assert all(case.leaks(text) for text in outputs.values()), outputs.keys()
    else:
        assert_no_leak(case, outputs)


# ------------------------------------------------------------------ grader grade / grade-all --report


class _Server:
    """Stands in for the worker server ``grader grade`` starts: the card is already graded."""

    @classmethod
    def started(cls) -> _Server:
        """How ``grader grade`` starts its server (``launcher.start_server``): nothing to start here."""
        return cls()

    def close(self) -> None:
        """Nothing was started."""


@pytest.mark.parametrize("fmt", cli.REPORT_FORMATS)
def test_grade_report_is_the_students_and_its_card_the_staffs(case: Case, tmp_path: Path, fmt: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``grader grade --report FMT``: the card beside the report is the staff's, the report the student's."""

    class Graded:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            """The command's own arguments: unused, the card is graded once for the module."""

        def __enter__(self) -> Graded:
            return self

        def __exit__(self, *exc: object) -> None:
            """Nothing to close."""

        def grade(self, path: Path, student: str | None = None) -> Scorecard:
            return case.card

    monkeypatch.setattr(api, "Grader", Graded)
    monkeypatch.setattr("grader.cli.shared.start_server", _Server.started)
    submission = tmp_path / "submission.py"
    shutil.copy(SOURCE, submission)
    out = tmp_path / "graded" / f"{STUDENT}.json"
    out.parent.mkdir()
    assert cli.main(["grade", str(submission), "--assignment", ASSIGNMENT, "--out", str(out), "--student", STUDENT,
                     "--format", "none", "--report", fmt]) == 0
    assert case.leaks(out.read_text(encoding="utf-8")) == list(case.secrets)
    out.unlink()
    assert_no_leak(case, texts_under(out.parent))


@pytest.mark.parametrize("fmt", cli.REPORT_FORMATS)
def test_grade_all_reports_are_the_students(case: Case, tmp_path: Path, fmt: str) -> None:
    """grade-all's own path after a grader process sends a card: the card, then the student's report."""
    layout = batch.Layout(tmp_path / "out")
    layout.prepare()
    options = batch.BatchOptions(tmp_path, ASSIGNMENT, layout.root, ROOT / "assignments.yaml", report=fmt)
    entry = intake.Handin(STUDENT, tmp_path / "submission.py", f"{STUDENT}/submission.py", "")
    row = batch_run.result_row("card", (STUDENT, case.card.to_json(), False), entry, "", layout, options)
    assert row.status == "graded"
    assert case.leaks(layout.card(STUDENT).read_text(encoding="utf-8")) == list(case.secrets)
    assert_no_leak(case, texts_under(layout.reports))


# ------------------------------------------------------------------ grader ci: GitHub, GitLab, Classroom


def ci_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(SOURCE, repo / "attention_modules.py")
    return repo


def test_nothing_grader_ci_writes_carries_the_seed(case: Case, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Cards, pages, JUnit, the step summary, the step outputs (Classroom's result decoded), the log and
    its annotations, from a card graded with a course secret (as the unlocked grader would grade it)."""
    monkeypatch.setattr("grader.ci.grading.grade_visible",
                        lambda targets, config, server=None: ([case.card for _ in targets], {}))
    repo = ci_repository(tmp_path)
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(repo), "GITHUB_EVENT_NAME": "push",
               "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    options = ci.Options(classroom=True, junit=tmp_path / "junit.xml", out=tmp_path / "results", all_files=True)
    log = StringIO()
    ci.run(options, environ, repo, log, unlocker=lambda: None)
    written = texts_under(tmp_path / "results", tmp_path / "junit.xml", summary, outputs)
    result = parse_outputs(outputs.read_text(encoding="utf-8"))["result"]
    written["classroom result"] = base64.b64decode(result).decode("utf-8")
    written["log"] = log.getvalue()
    assert any(p.endswith(".json") for p in written) and json.loads(written["classroom result"])["tests"]
    assert_no_leak(case, written)


# ------------------------------------------------------------------ Gradescope's per-submission step


FAKE_GRADER = '''#!{python}
"""`grader` as gradescope_run calls it: `grade` gives the card graded once for the test module; every other
command is the real one."""
import shutil
import sys

args = sys.argv[1:]
if args[0] == "grade":
    shutil.copy({card!r}, args[args.index("--out") + 1])
    sys.exit(0)
from grader.cli import main
sys.exit(main(args))
'''


@pytest.fixture
def gradescope_root(staff_card: Path, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(``/autograder`` laid out, the ``grader`` command): this repository as the bundle's source."""
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()  # run_autograder's main() makes it
    shutil.copy(SOURCE, root / "submission" / "attention_modules.py")
    (root / "source").symlink_to(ROOT, target_is_directory=True)
    grader = tmp_path / "grader"
    grader.write_text(FAKE_GRADER.format(python=sys.executable, card=str(staff_card)), encoding="utf-8")
    grader.chmod(0o755)
    yield root, grader


def test_gradescope_results_json_does_not_carry_the_seed(case: Case, gradescope_root: tuple[Path, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root, grader = gradescope_root
    gradescope_run.run(root, str(grader), ASSIGNMENT, "attention_modules.py", 120.0)
    results = root / "results" / "results.json"
    assert json.loads(results.read_text(encoding="utf-8"))["tests"], capsys.readouterr().err
    assert_no_leak(case, texts_under(results))
