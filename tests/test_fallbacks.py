"""No silent fallback (issue 26): each is refused in one line, or said in one warning line that names
what the grader did instead and how to fix it, and kept in summary.json (``grader.batch.fallbacks``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader import cli, seeds
from grader.batch import fallbacks
from grader.batch.intake import Handin
from grader.config import load_config
from grader.export.gradebook import exercise_zeros, row_from_card
from grader.scorecard import CheckResult, Scorecard, SubmissionInfo
from tests.conftest import ROOT

ASSIGNMENT = load_config().assignment("attention")


def grade_all(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    """``grader grade-all`` in this process: its exit status and its stderr."""
    try:
        code = cli.main(["grade-all", *map(str, args)])
    except SystemExit as exc:  # argparse's refusals
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def one_student(tmp_path: Path) -> Path:
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice.py").write_text("def softmax(x):\n    return x\n")
    return klass


# ------------------------------------------------------------------ refused in one line, nothing written


@pytest.mark.parametrize("value, fragment", [
    ("12345", "GRADER_COURSE_SECRET holds 5 bytes: a course secret needs at least 16"),
    ("", "GRADER_COURSE_SECRET is set but empty: nothing graded"),
])
def test_a_short_or_empty_course_secret_is_refused_in_one_line(tmp_path, capsys, monkeypatch, value, fragment):
    monkeypatch.setenv(seeds.SECRET_ENV, value)
    code, err = grade_all(capsys, one_student(tmp_path), "--assignment", "attention", "--out", tmp_path / "out")
    assert code == 2 and err.startswith(f"grader: {fragment}") and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_a_short_course_secret_file_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    short = tmp_path / "secret.txt"
    short.write_text("hunter2\n")
    code, err = grade_all(capsys, one_student(tmp_path), "--assignment", "attention", "--out", tmp_path / "out",
                          "--course-secret-file", short)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"grader: the course secret file {short} holds 7 bytes: a course secret needs at least 16")


@pytest.mark.parametrize("folder", ["empty", "only stray files"])
def test_no_submission_at_all_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, folder):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    klass = tmp_path / "class"
    klass.mkdir()
    if folder == "only stray files":
        (klass / "notes.txt").write_text("not a submission")
    code, err = grade_all(capsys, klass, "--assignment", "attention", "--out", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"grader: {klass}: no submission found") and "add --roster" in err
    assert not (tmp_path / "out").exists()


def test_no_submission_with_a_roster_is_a_class_of_missing_students(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    klass = tmp_path / "class"
    klass.mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nalice\nbob\n")
    code, err = grade_all(capsys, klass, "--assignment", "attention", "--out", tmp_path / "out", "--roster", roster)
    assert code == 0, err
    rows = (tmp_path / "out" / "gradebook.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",missing," in r for r in rows[1:]), rows


def test_a_dry_run_without_the_secret_the_cards_were_graded_with_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    out = tmp_path / "out"
    (out / "cards").mkdir(parents=True)
    (out / "cards" / "alice.json").write_text(json.dumps({"environment": {"input_seed": 123456}}))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    code, err = grade_all(capsys, one_student(tmp_path), "--assignment", "attention", "--out", out, "--dry-run")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"grader: --dry-run without the course secret: the cards in {out} were graded with "
                          "per-student hidden inputs")
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_a_real_run_without_the_secret_it_had_is_warned_not_refused(tmp_path):
    out = tmp_path / "out"
    (out / "cards").mkdir(parents=True)
    (out / "cards" / "alice.json").write_text(json.dumps({"environment": {"input_seed": 7}}))
    [text] = fallbacks.secret_dropped(out, False, None)
    assert "every student is re-graded on the shared inputs" in text and seeds.SECRET_ENV in text
    assert fallbacks.secret_dropped(out, False, b"x" * 16) == []  # a secret now: nothing dropped
    (out / "cards" / "alice.json").write_text(json.dumps({"environment": {"input_seed": 0}}))
    assert fallbacks.secret_dropped(out, True, None) == []  # graded on shared inputs before: nothing changes


# ------------------------------------------------------------------ misspelt flags


@pytest.mark.parametrize("argv, message", [
    (["grade", "a.py", "--assigment", "attention", "--out", "c.json"],
     "unknown flag --assigment; did you mean --assignment?"),
    (["grade-all", "subs", "--assignment", "attention", "--out", "o", "--dry-rn"],
     "unknown flag --dry-rn; did you mean --dry-run?"),
    (["check", "a.py", "--wach"], "unknown flag --wach; did you mean --watch?"),
    (["grade", "a.py", "--assignment", "attention", "--out", "c.json", "--zzzzzz"],
     "unknown flag --zzzzzz; `grader grade --help` lists them"),
])
def test_a_misspelt_flag_is_named_with_the_closest_one(capsys, argv, message):
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"grader: {message}\n"


def test_abbreviations_and_negative_numbers_are_not_unknown_flags():
    args = cli.build_parser().parse_args(["override", "bob", "--points", "-1", "--reason", "r", "--by", "me",
                                          "--exer", "softmax"])
    assert args.points == -1 and args.exercise == "softmax"


# ------------------------------------------------------------------ said: one warning line each


def handin(student: str, time: str = "", late: bool | None = None) -> Handin:
    return Handin(student, Path(f"{student}.py"), f"{student}.py", submitted_at=time, late=late)


def test_ids_that_match_no_student_are_named():
    texts = fallbacks.unmatched_ids({"alice": 1, "zed": 1}, {"yan": 1, "bob": 1}, {"alice", "bob"})
    assert texts == [
        "the extensions CSV names 1 id(s) that match no student: zed; their extensions are not applied; "
        "correct them to the roster's ids (or the submissions' names)",
        "--submitted-at-csv names 1 id(s) that match no student: yan; their times are not used; "
        "correct them to the roster's ids (or the submissions' names)"]
    assert fallbacks.unmatched_ids({"alice": 1}, {}, {"alice"}) == []


def test_a_student_without_a_time_under_a_policy_is_named_not_silently_on_time(tmp_path):
    with_policy = load_config(deadline_config(tmp_path)).assignment("attention")
    plan = [handin("alice"), handin("bob", "2026-03-01T10:00:00+00:00"), handin("carol"),
            Handin("dave", None, "", "nothing submitted")]
    [text] = fallbacks.unknown_times(plan, with_policy, {"carol": "2026-03-01T10:00:00+00:00"}, None)
    assert text.startswith("no submission time for 1 student(s): alice (not in --submitted-at-csv, no "
                           "--submitted-at, none in the download); graded as on time;")
    assert fallbacks.unknown_times(plan, with_policy, {}, "2026-03-01T10:00:00+00:00") == []  # everyone's time
    assert fallbacks.unknown_times(plan, ASSIGNMENT, {}, None) == []  # no policy: no time needed


def test_the_lms_late_flag_without_a_policy_is_said_to_be_ignored(tmp_path):
    plan = [handin("alice", late=True), handin("bob", late=False), handin("carol")]
    [text] = fallbacks.ignored_late_flags(plan, ASSIGNMENT)
    assert text == ("the download marks 1 submission(s) late: alice; the flag is ignored because no deadline policy "
                    "is set (no penalty; kept in records/); add a deadline: to assignment 'attention' in "
                    "assignments.yaml to apply one")
    with_policy = load_config(deadline_config(tmp_path)).assignment("attention")
    assert fallbacks.ignored_late_flags(plan, with_policy) == []


def test_each_warning_is_one_line_with_the_prefix():
    assert fallbacks.line("a\nb  c") == "grader: warning: a b c"


def deadline_config(tmp_path: Path) -> Path:
    """The course's assignments.yaml with a late policy on ``attention`` (references made absolute)."""
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    for assignment in raw["assignments"].values():
        for key in ("reference", "stub"):
            if isinstance(assignment.get(key), str) and not Path(assignment[key]).is_absolute():
                assignment[key] = str(ROOT / assignment[key])
    raw["assignments"]["attention"]["deadline"] = {"due": "2026-03-01T23:59:00+01:00", "timezone": "Europe/Paris",
                                                   "penalty": {"per": "day", "percent": 10}}
    path = tmp_path / "assignments.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


# ------------------------------------------------------------------ a zero explained per exercise


def check(id_: str, exercise: str, status: str = "passed", message: str = "", points: float = 1.0) -> CheckResult:
    return CheckResult(id_, exercise, status, points if status == "passed" else 0.0, points, message, "visible")


def test_an_exercise_at_zero_has_its_reason_in_the_gradebook_message():
    checks = (check("test_rows_sum_to_one", "softmax"),
              check("test_is_causal", "causal_mask", "failed", "row 0 sees token 1", 2),
              check("test_shape", "causal_mask", "failed", "shape (3, 3), expected (1, 3, 3)", 3),
              check("test_scores", "attention_scores", "failed", "not attempted"),
              check("test_scaled", "attention_scores", "failed", "not attempted"))
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1.0, 8.0, checks)
    assert exercise_zeros(card) == ("causal_mask: 0/5, test_is_causal: row 0 sees token 1; "
                                    "attention_scores: 0/2, not attempted")
    assert row_from_card("amy", card, "amy.py", "cards/amy.json").message == exercise_zeros(card)
    full = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1.0, 1.0, checks[:1])
    assert exercise_zeros(full) == "" and row_from_card("amy", full, "amy.py", "cards/amy.json").message == ""


# ------------------------------------------------------------------ end to end: said on stderr and in summary.json


def test_grade_all_says_each_late_policy_fallback_once_and_keeps_it_in_the_summary(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    for student in ("alice", "bob"):
        (klass / f"{student}.py").write_text((ROOT / "exercises/attention.py").read_text())
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nalice,2026-03-01T12:00:00+01:00\nzed,2026-03-01T12:00:00+01:00\n")
    extensions = tmp_path / "extensions.csv"
    extensions.write_text("student,extra_days,reason\nyan,2,ill\n")
    env = {**os.environ, seeds.SECRET_ENV: "s" * 32}  # with a secret: only the late policy's fallbacks are said
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(klass), "--assignment", "attention",
                           "--out", str(tmp_path / "out"), "--jobs", "1", "--config", str(deadline_config(tmp_path)),
                           "--submitted-at-csv", str(times), "--extensions", str(extensions)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith(fallbacks.PREFIX)]
    assert said == [
        "grader: warning: the extensions CSV names 1 id(s) that match no student: yan; their extensions are not "
        "applied; correct them to the roster's ids (or the submissions' names)",
        "grader: warning: --submitted-at-csv names 1 id(s) that match no student: zed; their times are not used; "
        "correct them to the roster's ids (or the submissions' names)",
        "grader: warning: no submission time for 1 student(s): bob (not in --submitted-at-csv, no --submitted-at, "
        "none in the download); graded as on time; give their times in --submitted-at-csv (student,submitted_at) "
        "or --submitted-at"], proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["warnings"] == [line.removeprefix(fallbacks.PREFIX) for line in said]


# ------------------------------------------------------------------ a class graded with no course secret (issue 37)


class _Options:
    """What ``fallbacks.said`` reads of grade-all's options."""

    def __init__(self, out: Path) -> None:
        self.out, self.extensions, self.submitted_at, self.submitted_at_all = out, {}, {}, None
        self.said: list[str] = []
        self.say = self.said.append


@pytest.mark.parametrize("before", ["first run", "graded with a secret", "graded without one"])
@pytest.mark.parametrize("secret", [None, b"s" * 16, b"t" * 64])
def test_a_secret_less_class_gets_exactly_one_warning_with_the_command_that_makes_one(tmp_path, before, secret):
    out = tmp_path / "out"
    if before != "first run":
        (out / "cards").mkdir(parents=True)
        seed = 7 if before == "graded with a secret" else 0
        (out / "cards" / "alice.json").write_text(json.dumps({"environment": {"input_seed": seed}}))
    options = _Options(out)
    texts = fallbacks.said([handin("alice")], [handin("alice")], None, ASSIGNMENT, options, secret)
    about = [t for t in texts if "course secret" in t]
    assert len(about) == (0 if secret else 1) and options.said == [fallbacks.line(t) for t in texts]
    if secret is None and before != "graded with a secret":  # never had one: how to make one, in full
        assert about[0].startswith("no course secret") and "the same for every student" in about[0]
        assert f"`{seeds.MAKE_SECRET_FILE}`" in about[0]
        assert f"--course-secret-file {seeds.SECRET_FILE_EXAMPLE}" in about[0]
    elif secret is None:  # had one: the warning says it was dropped, and only that
        assert "re-graded on the shared inputs" in about[0]


def test_the_command_the_warning_gives_makes_a_private_secret_the_grader_takes(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(["bash", "-c", seeds.MAKE_SECRET_FILE], env={"HOME": str(home), "PATH": os.environ["PATH"]},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    made = home / seeds.SECRET_FILE_EXAMPLE.removeprefix("~/")
    assert made.stat().st_mode & 0o777 == 0o600  # readable by its owner only
    secret = seeds.read_secret_file(made)
    assert len(secret) == 64 and seeds.course_secret(made) == secret
    again = subprocess.run(["bash", "-c", seeds.MAKE_SECRET_FILE], env={"HOME": str(home), "PATH": os.environ["PATH"]},
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and seeds.read_secret_file(made) != secret  # random: a new one each time


@pytest.mark.parametrize("with_secret", [False, True])
def test_grade_all_without_a_secret_warns_once_in_stderr_summary_and_class_page(tmp_path, with_secret):
    klass = one_student(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != seeds.SECRET_ENV}
    extra = []
    if with_secret:
        (tmp_path / "secret").write_text("s" * 32)
        extra = ["--course-secret-file", str(tmp_path / "secret")]
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(klass), "--assignment", "attention",
                           "--out", str(tmp_path / "out"), "--jobs", "1", *extra],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "course secret" in line]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    page = (tmp_path / "out" / "reports" / "_index.html").read_text()
    if with_secret:
        assert said == [] and summary["warnings"] == [] and "no course secret" not in page
        return
    assert len(said) == 1 and said[0].startswith(fallbacks.PREFIX + "no course secret"), proc.stderr
    assert summary["warnings"] == [said[0].removeprefix(fallbacks.PREFIX)]
    assert "warning: no course secret" in page and seeds.SECRET_FILE_EXAMPLE in page
