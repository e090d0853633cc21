"""``grader export moodle``: the grading worksheet back, run through Moodle's importer rules.

The worksheets are files in tests/data/moodle/ (its README says what each must
yield); GRADED is a grade-all folder built here, records and cards. Every
upload goes through ``tests/moodle_importer.py``, a restatement of Moodle's
"Upload grading worksheet" written from Moodle's code, with what Moodle held
when it wrote the worksheet: so a test sees what Moodle would set, not what our
writer meant to write.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from grader import batch, cli, scorecard
from grader.export.gradebook import Row
from grader.scorecard import CheckResult, Diagnosis, ExerciseDiagnosis, Scorecard, SubmissionInfo
from tests import moodle_importer as importer

DATA = Path(__file__).parent / "data" / "moodle"
SHA = "cd" * 32
ADA_MISTAKE = "exp overflows on large inputs: subtract each row's maximum before exp, & 1 < 2"
HIDDEN_MISTAKE = "the scale is applied twice"  # only a hidden check showed it: no student may read it
PIDS = {"s1001": "1234567", "s1002": "1234568", "s1003": "1234569", "s1004": "1234570", "s1005": "1234571",
        "s1006": "1234572", "s1007": "1234573"}


def card(student: str, passed: float, failed: float, *, visibility: str = "visible", mistake: str = "",
         message: str = "wrong values") -> Scorecard:
    """A card out of passed + failed points: one passing check, one failing (with a diagnosis when ``mistake``)."""
    diagnosis = Diagnosis("no-max-shift", "the maximum is not subtracted") if mistake else None
    checks = (CheckResult("test_output_matches_reference[causal_mask]", "causal_mask", "passed", passed, passed, "",
                          "visible"),
              CheckResult("test_rows_sum_to_one", "softmax", "failed", 0.0, failed, message, visibility,
                          diagnosis=diagnosis))
    named = (ExerciseDiagnosis("softmax", "no-max-shift", "the maximum is not subtracted", mistake,
                               ("test_rows_sum_to_one",)),) if mistake else ()
    result = Scorecard("attention", SubmissionInfo(f"{student}/attention.py", SHA), passed, passed + failed, checks,
                       diagnoses=named, graded_at="2025-03-05T10:00:00Z")
    scorecard.validate(result.to_dict())  # a card the grader could have written
    return result


def graded_folder(root: Path, files: dict[str, str] | None = None) -> Path:
    """GRADED as grade-all leaves it (tests/data/moodle/README.md lists who is what)."""
    layout = batch.Layout(root)
    layout.prepare()
    cards = {"s1001": card("s1001", 7.5, 2.5, mistake=ADA_MISTAKE),
             "s1002": card("s1002", 9.0, 1.0, visibility="hidden", mistake=HIDDEN_MISTAKE),
             "s1003": card("s1003", 0.0, 10.0, message="not attempted"),
             "s1004": card("s1004", 9.0, 1.0),
             "s1007": card("s1007", 7.5, 2.5)}
    files = files or {}
    for student, found in cards.items():
        layout.card(student).write_text(found.to_json())
        row = Row(student, "graded", files.get(student, f"{student}/attention.py"), SHA, found.score, found.max_score,
                  card=f"cards/{student}.json")
        if student == "s1007":
            row = Row(**{**row.to_dict(), "exercises": (), "score": 6.75, "raw_score": 7.5, "penalty": 0.75,
                         "late_rule": "1 h late: -10%"})
        batch.write_record(layout, row, "")
    batch.write_record(layout, Row("s1005", "missing", message="on the roster, nothing submitted"), "")
    batch.write_record(layout, Row("s1006", "error", "s1006/attention.py", SHA, message="grader error: worker died"),
                       "")
    layout.manifest.write_text(json.dumps({"assignment": "attention"}))
    return root


def export(tmp_path: Path, worksheet: str, *extra: str, graded: Path | None = None) -> tuple[int, Path]:
    out = tmp_path / "upload.csv"
    code = cli.main(["export", "moodle", str(graded or graded_folder(tmp_path / "graded")), "--worksheet",
                     str(DATA / worksheet), "--out", str(out), *extra])
    return code, out


def table(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))


def moodle_as_downloaded(worksheet: str, decsep: str = ".", maximum: float = 10.0) -> importer.Moodle:
    data = (DATA / worksheet).read_bytes()
    return importer.Moodle(maximum, importer.held_as_downloaded(data, decsep), decsep)


def test_a_worksheet_comes_back_with_grades_and_comments_moodle_takes(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out = export(tmp_path, "worksheet.csv")
    assert code == 0
    result = importer.upload(out.read_bytes(), moodle_as_downloaded("worksheet.csv"))
    assert result.grades == {"1234567": 7.5, "1234568": 9.0, "1234569": 0.0, "1234573": 6.75}
    assert result.skipped == {}
    ada, bob, cy, gus = (result.feedback[PIDS[s]] for s in ("s1001", "s1002", "s1003", "s1007"))
    assert ada == ("<p>Autograder score: 7.5 / 10 points</p><p>softmax: exp overflows on large inputs: subtract "
                   "each row's maximum before exp, &amp; 1 &lt; 2</p>")  # Moodle stores comments as HTML
    assert bob == "<p>Nice work on the mask.</p><p>Autograder score: 9 / 10 points</p>"  # the TA's words first
    assert HIDDEN_MISTAKE not in out.read_text(encoding="utf-8")
    assert cy.startswith("<p>Autograder score: 0 / 10 points</p><p>no check passed; first: test_rows_sum_to_one: "
                         "not attempted")
    assert gus == "<p>Autograder score: 6.75 / 10 points</p><p>Late: 1 h late: -10% (before it: 7.5)</p>"
    before, after = table(DATA / "worksheet.csv"), table(out)
    for old, new in zip(before, after, strict=True):  # only Grade and Feedback comments change
        assert {k: v for k, v in old.items() if k not in ("Grade", "Feedback comments")} == \
               {k: v for k, v in new.items() if k not in ("Grade", "Feedback comments")}
    assert capsys.readouterr().err == ("grader: moodle: graded but not on the worksheet, so not in the upload: s1004\n"
                                       "grader: moodle: 1 grade already on the worksheet replaced: s1002 (6.00 -> 9)\n")


def test_a_second_export_replaces_its_own_comment_and_changes_nothing_else(tmp_path: Path) -> None:
    code, first = export(tmp_path, "worksheet.csv")
    assert code == 0
    again = tmp_path / "again.csv"
    assert cli.main(["export", "moodle", str(tmp_path / "graded"), "--worksheet", str(first), "--out",
                     str(again)]) == 0
    assert again.read_bytes() == first.read_bytes()


@pytest.mark.parametrize(("worksheet", "student", "said"), [
    ("worksheet_locked.csv", "s1004", "grader: moodle: s1004 left as Moodle has it: the worksheet says the grade "
                                      "cannot be changed (locked or overridden in the gradebook)\n"),
    ("worksheet_no_submission.csv", "s1005", "grader: moodle: 1 with nothing submitted left as Moodle has them: "
                                             "s1005\n"),
    ("worksheet_error.csv", "s1006", "grader: moodle: s1006 left as Moodle has it (error: grader error: worker "
                                     "died); their Moodle grade is unchanged\n"),
])
def test_a_student_we_cannot_grade_is_left_exactly_as_moodle_had_them_and_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], worksheet: str, student: str, said: str) -> None:
    code, out = export(tmp_path, worksheet)
    assert code == 0
    before, after = table(DATA / worksheet), table(out)
    assert before[1] == after[1] and after[1]["ID number"] == student
    assert after[0]["Grade"] == "7.5"
    assert said in capsys.readouterr().err
    moodle = moodle_as_downloaded(worksheet)
    result = importer.upload(out.read_bytes(), moodle)
    assert result.grades == {"1234567": 7.5} and PIDS[student] not in result.feedback
    if worksheet == "worksheet_locked.csv":  # had we written Dee's grade, Moodle would have refused it anyway
        changed = out.read_text().replace("8.00,10.00,No", "9,10.00,No").encode()
        assert importer.upload(changed, moodle).skipped[PIDS[student]] == "grade is locked"


def test_a_comma_decimal_worksheet_keeps_its_mark_and_gets_grades_every_language_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = export(tmp_path, "worksheet_comma_decimal.csv")
    assert code == 0
    assert out.read_bytes().startswith(b"\xef\xbb\xbfIdentifier,")
    assert [row["Grade"] for row in table(out)] == ["7.5", "9"]
    moodle = moodle_as_downloaded("worksheet_comma_decimal.csv", ",")  # written for a ',' language
    for decsep in (",", "."):  # the uploading teacher's language decides what Moodle reads; '.' reads in both
        moodle.decsep = decsep
        assert importer.upload(out.read_bytes(), moodle).grades == {"1234567": 7.5, "1234568": 9.0}
    assert importer.unformat_float("7,5", ".") == 7.0  # why a comma is never written: PHP's cast stops at it
    assert "s1002 (6,50 -> 9)" in capsys.readouterr().err


def test_a_grade_changed_in_moodle_after_the_download_is_not_overwritten(tmp_path: Path) -> None:
    """The upload keeps Last modified (grade) as downloaded, so Moodle's own check still protects a later grade."""
    code, out = export(tmp_path, "worksheet.csv")
    assert code == 0
    assert [r["Last modified (grade)"] for r in table(out)] == [r["Last modified (grade)"]
                                                                 for r in table(DATA / "worksheet.csv")]
    moodle = moodle_as_downloaded("worksheet.csv")
    moodle.participants["1234568"].modified += 3600  # a TA regraded Bob in Moodle an hour after the download
    result = importer.upload(out.read_bytes(), moodle)
    assert result.skipped == {"1234568": "grade has been modified in Moodle since the download"}
    assert "1234568" not in result.feedback and result.grades["1234567"] == 7.5
    assert importer.upload(out.read_bytes(), moodle, ignore_modified=True).grades["1234568"] == 9.0


def test_another_maximum_is_refused_unless_scaled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = export(tmp_path, "worksheet_max100.csv")
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert err == ("grader: moodle: GRADED's maximum is 10 points but the worksheet's Maximum grade is 100: set the "
                   "Moodle assignment's maximum grade to 10, or pass --scale to write each score x 100/10\n")
    code, out = export(tmp_path, "worksheet_max100.csv", "--scale", graded=tmp_path / "graded")
    assert code == 0
    result = importer.upload(out.read_bytes(), moodle_as_downloaded("worksheet_max100.csv", maximum=100.0))
    assert result.grades == {"1234567": 75.0}
    assert result.feedback["1234567"].startswith("<p>Autograder score: 7.5 / 10 points (75 / 100 in Moodle)</p>")


def test_the_checker_refuses_what_moodle_refuses_so_its_acceptance_means_something() -> None:
    moodle = importer.Moodle(10.0, {"1": importer.Held()})
    head = "Identifier,Grade,Last modified (grade)\n"
    assert importer.upload((head + "Participant 1,12,-\n").encode(), moodle).skipped == {"1": "out of range"}
    assert importer.upload((head + "Participant 1,,-\n").encode(), moodle).skipped == {"1": "grade has no value"}
    assert importer.upload((head + "Participant 1,-,-\n").encode(), moodle).grades == {"1": 0.0}  # "-" is a 0!
    with pytest.raises(importer.Refused, match="csvweirdcolumns"):
        importer.upload((head + "Participant 1,5\n").encode(), moodle)
    with pytest.raises(importer.Refused, match="invalidgradeimport"):
        importer.upload(b"Identifier,Grade\nParticipant 1,5\n", moodle)


def test_blind_marking_matches_students_by_their_download_folders(tmp_path: Path) -> None:
    files = {s: f"Participant_{PIDS[s]}_assignsubmission_file_/attention.py" for s in ("s1001", "s1002")}
    graded = graded_folder(tmp_path / "graded", files)
    code, out = export(tmp_path, "worksheet_blind.csv", graded=graded)
    assert code == 0
    result = importer.upload(out.read_bytes(), moodle_as_downloaded("worksheet_blind.csv"))
    assert result.grades == {"1234567": 7.5, "1234568": 9.0}


def test_cards_alone_work_too(tmp_path: Path) -> None:
    graded = graded_folder(tmp_path / "graded")
    out = tmp_path / "upload.csv"
    cards = [str(graded / "cards" / f"{s}.json") for s in ("s1001", "s1002")]
    assert cli.main(["export", "moodle", *cards, "--worksheet", str(DATA / "worksheet_locked.csv"),
                     "--out", str(out)]) == 0
    assert [r["Grade"] for r in table(out)] == ["7.5", "8.00"]


@pytest.mark.parametrize(("worksheet", "said"), [
    ("not_a_worksheet.csv", "not a Moodle grading worksheet: no 'Identifier' column (found 'Student', 'ID'"),
    ("worksheet_no_identifier.csv", "not a Moodle grading worksheet: no 'Identifier' column (found 'Full name'"),
    ("worksheet_french.csv", "with Moodle's language set to English"),
    ("worksheet_scale.csv", "graded on a scale"),
    ("missing.csv", "cannot read the worksheet: No such file or directory"),
])
def test_a_worksheet_we_cannot_fill_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             worksheet: str, said: str) -> None:
    code, out = export(tmp_path, worksheet)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.startswith("grader: moodle: ") and said in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_ragged_worksheet_or_none_at_all_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ragged = tmp_path / "ragged.csv"
    ragged.write_text((DATA / "worksheet.csv").read_text().replace(",-,\n", ",-\n", 1))
    graded = graded_folder(tmp_path / "graded")
    out = tmp_path / "upload.csv"
    assert cli.main(["export", "moodle", str(graded), "--worksheet", str(ragged), "--out", str(out)]) == 2
    assert "line 2: 10 cells, the header has 11: Moodle refuses the whole file" in capsys.readouterr().err
    assert cli.main(["export", "moodle", str(graded), "--out", str(out)]) == 2
    assert "--worksheet is needed" in capsys.readouterr().err and not out.exists()


def test_a_zero_after_the_cutoff_is_explained_by_the_cutoff_not_by_the_checks() -> None:
    """A full-marks file handed in after the cutoff scores 0; its comment said "no check passed" (bench/term.py's
    eve): the checks all passed, and the late line already says why the grade is 0."""
    from grader.export import moodle_plan

    full = card("s1007", 10.0, 0.0)
    full = Scorecard(**{**full.__dict__, "checks": tuple(CheckResult(c.id, c.exercise, "passed", c.max_score,
                                                                     c.max_score, "", "visible")
                                                         for c in full.checks), "score": 10.0})
    rule = ("submitted 2026-04-04T23:59:30+02:00, after the cutoff 2026-04-04T23:59:00+02:00: scored 0")
    row = Row("s1007", "graded", "s1007/attention.py", SHA, 0.0, 10.0, card="cards/s1007.json", raw_score=10.0,
              penalty=10.0, late_rule=rule)
    grade = moodle_plan.grade_of(row, full, 10.0, False)
    assert grade.points == 0
    assert grade.comment == (f"<p>Autograder score: 0 / 10 points</p><p>Late: {rule} (before it: 10)</p>")
    zero = card("s1003", 0.0, 10.0, message="not attempted")  # a zero the checks gave is still explained
    row0 = Row("s1003", "graded", "s1003/attention.py", SHA, 0.0, 10.0, card="cards/s1003.json")
    assert "no check passed; first: test_rows_sum_to_one: not attempted" in moodle_plan.grade_of(row0, zero, 10.0,
                                                                                                  False).comment
