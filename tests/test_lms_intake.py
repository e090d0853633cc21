"""Real course data in: rosters as LMSs export them, bulk downloads as LMSs write them.

Every fixture here is laid out the way the system writes it (``grader/coursedata/lms_readers.py``
and ``grader/coursedata/roster.py`` say where each format was taken from): a Canvas
"Download Submissions" zip and gradebook export, a Gradescope "Export
Submissions" zip with its Ruby-flavoured ``submission_metadata.yml`` and its
roster, a Moodle "Download all submissions" folder with its grading worksheet
or participants list, and GitHub Classroom clones with their roster.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import batch, cli
from grader.batch import intake, run
from grader.coursedata import lms
from grader.export.gradebook import Row
from grader.coursedata.roster import RosterEntry, RosterError, load_roster, read_roster
from tests.conftest import ROOT

REFERENCE = (ROOT / "solutions/attention.py").read_text()
STUB = (ROOT / "exercises/attention.py").read_text()


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def by_student(found: intake.Intake) -> dict[str, intake.Handin]:
    return {e.student: e for e in found.entries}


# ------------------------------------------------------------------ Canvas

CANVAS_GRADEBOOK = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Attention (5501)\r\n"
    "    Points Possible,,,,,137.50\r\n"
    '"Doe, Jane",12345,S001,jdoe,Section 1,\r\n'
    '"Smith, Bob",23456,S002,bsmith,Section 1,\r\n'
    '"Lee, Ann",34567,S003,alee,Section 2,\r\n'
    '"Carl, Carl",45678,S004,ccarl,Section 2,\r\n'
    '"Student, Test",99999,,,Section 1,\r\n'
)


def canvas_zip(path: Path) -> Path:
    """Canvas' flat ``<sortable name>_[LATE_]<user id>_<submission id>_<original name>`` files."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("doejane_LATE_12345_678901_attention.py", REFERENCE)
        z.writestr("smithbob_23456_678902_attention-1.py", "raise SystemExit('the second upload')\n")
        z.writestr("smithbob_23456_678902_attention-2.py", STUB)  # the third upload: the latest
        z.writestr("leeann_34567_678903_notes.txt", "forgot the file")
        z.writestr("strangerx_77777_678904_attention.py", REFERENCE)  # not on the roster
        z.writestr("readme.txt", "put here by hand")
    return path


def test_canvas_gradebook_export_is_a_roster(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "gradebook.csv", CANVAS_GRADEBOOK))
    assert roster.id_column == "SIS Login ID" and roster.source == "Canvas gradebook export"
    assert [e.student for e in roster.entries] == ["jdoe", "bsmith", "alee", "ccarl"]  # no Points Possible, no Test
    assert roster.entries[0] == RosterEntry("jdoe", name="Doe, Jane", canvas_id="12345", sis_user_id="S001",
                                            sis_login_id="jdoe", section="Section 1")
    assert roster.line().startswith("roster: 4 students, id column `SIS Login ID` (Canvas gradebook export)")
    assert "Points Possible" in roster.line() and "Test Student" in roster.line()


def test_canvas_without_sis_logins_falls_back_to_the_canvas_id(tmp_path: Path) -> None:
    text = "Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n\"Doe, Jane\",12345,,,A\n"
    roster = load_roster(write(tmp_path / "g.csv", text))
    assert roster.id_column == "ID" and roster.entries[0].student == "12345"


def test_a_canvas_download_is_recognised_and_mapped_to_the_roster(tmp_path: Path) -> None:
    roster = read_roster(write(tmp_path / "gradebook.csv", CANVAS_GRADEBOOK))
    found = intake.scan(canvas_zip(tmp_path / "submissions.zip"), "attention.py", tmp_path / "unzip", roster)
    assert found.layout == "canvas"
    entries = by_student(found)
    assert sorted(entries) == ["alee", "bsmith", "jdoe", "strangerx_77777"]
    assert entries["jdoe"].file == "doejane_LATE_12345_678901_attention.py" and entries["jdoe"].late is True
    assert entries["bsmith"].file == "smithbob_23456_678902_attention-2.py"  # the latest resubmission
    assert entries["bsmith"].late is False and entries["bsmith"].submitted_at == ""
    assert entries["alee"].path is None and "no .py or .ipynb file among leeann_34567_678903_notes.txt" in (
        entries["alee"].problem)
    stranger = entries["strangerx_77777"]
    assert stranger.path is None and "Canvas user 77777 (strangerx) is not on the roster" in stranger.problem
    assert any("readme.txt" in n for n in found.notes)  # an unknown file is reported
    assert any("no submission times" in n for n in found.notes)
    plan = run.planned(found.entries, batch.BatchOptions(Path(), "attention", Path(), Path(), roster=tuple(roster)))
    assert [(e.student, e.problem) for e in plan if e.problem == batch.MISSING] == [("ccarl", batch.MISSING)]


def test_canvas_without_a_roster_files_students_by_name_and_user_id(tmp_path: Path) -> None:
    found = intake.scan(canvas_zip(tmp_path / "submissions.zip"), "attention.py", tmp_path / "unzip")
    assert sorted(by_student(found)) == ["doejane_12345", "leeann_34567", "smithbob_23456", "strangerx_77777"]


def test_two_different_canvas_files_are_never_a_silent_pick(tmp_path: Path) -> None:
    write(tmp_path / "d" / "doejane_12345_1_attention.py", REFERENCE)
    write(tmp_path / "d" / "doejane_12345_1_attention.ipynb", "{}")
    [entry] = intake.scan(tmp_path / "d", "attention.py", tmp_path / "unzip").entries
    assert entry.path is None and "attention.py" in entry.problem and "attention.ipynb" in entry.problem


# ------------------------------------------------------------------ Gradescope

GRADESCOPE_METADATA = """\
---
submission_1001:
  :submitters:
  - :name: Jane Doe
    :sid: '1001'
    :email: jane@uni.edu
  :created_at: 2024-03-01 23:58:12.123456000 -08:00
  :score: 137.5
  :status: processed
  :results: !ruby/hash:ActiveSupport::HashWithIndifferentAccess
    tests: []
  :history: []
submission_1002:
  :submitters:
  - :name: Bob Smith
    :sid: '1002'
    :email: bob@uni.edu
  - :name: Ann Lee
    :sid:
    :email: ANN@uni.edu
  :created_at: 2024-03-02 10:00:00.000000000 -08:00
  :score: 0.0
  :status: processed
  :results: {}
  :history:
  - :id: 99
    :created_at: 2024-03-01 09:00:00.000000000 -08:00
    :score: 0.0
submission_1003:
  :submitters:
  - :name: Someone Else
    :sid: '9999'
    :email: else@uni.edu
  :created_at: 2024-03-03 12:00:00.000000000 -08:00
  :score: 0.0
  :status: processed
  :results: {}
  :history: []
"""
GRADESCOPE_ROSTER = (
    "First Name,Last Name,SID,Email,Role,Sections\n"
    "Jane,Doe,1001,jane@uni.edu,Student,A\n"
    "Bob,Smith,1002,bob@uni.edu,Student,A\n"
    "Ann,Lee,,ann@uni.edu,Student,B\n"
    "Tom,Ta,,ta@uni.edu,TA,\n"
    "Dee,Missing,1004,dee@uni.edu,Student,B\n"
)


def gradescope_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        top = "assignment_777_export/"
        z.writestr(top + "submission_metadata.yml", GRADESCOPE_METADATA)
        z.writestr(top + "submission_1001/attention.py", REFERENCE)
        z.writestr(top + "submission_1002/src/attention.py", STUB)
        z.writestr(top + "submission_1003/attention.py", REFERENCE)
        z.writestr(top + "submission_1005/attention.py", REFERENCE)  # not in the metadata
    return path


def test_gradescope_roster_uses_sid_or_else_email_and_leaves_staff_out(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "roster.csv", GRADESCOPE_ROSTER))
    assert roster.source == "Gradescope roster" and roster.id_column == "Email"  # Ann has no SID
    assert [e.student for e in roster.entries] == ["jane@uni.edu", "bob@uni.edu", "ann@uni.edu", "dee@uni.edu"]
    assert roster.entries[0].sid == "1001" and roster.entries[0].name == "Jane Doe"
    assert "1 staff" in roster.line()
    full = load_roster(write(tmp_path / "r2.csv", "First Name,Last Name,SID,Email,Role\nJ,D,1001,j@u.edu,Student\n"))
    assert full.id_column == "SID" and full.entries[0].student == "1001"


def test_a_gradescope_export_is_recognised_with_times_and_group_members(tmp_path: Path) -> None:
    roster = read_roster(write(tmp_path / "roster.csv", GRADESCOPE_ROSTER))
    found = intake.scan(gradescope_zip(tmp_path / "export.zip"), "attention.py", tmp_path / "unzip", roster)
    assert found.layout == "gradescope"
    entries = by_student(found)
    assert sorted(entries) == ["9999", "ann@uni.edu", "bob@uni.edu", "jane@uni.edu"]
    assert entries["jane@uni.edu"].file == "submission_1001/attention.py"
    assert entries["jane@uni.edu"].submitted_at == "2024-03-01T23:58:12.123456-08:00"
    assert entries["jane@uni.edu"].late is None  # the export has no late flag
    for member in ("bob@uni.edu", "ann@uni.edu"):  # a group submission: each member gets the group's file
        assert entries[member].file == "submission_1002/src/attention.py"
        assert entries[member].submitted_at == "2024-03-02T10:00:00-08:00"
    assert "Gradescope submission_1003 (Someone Else) is not on the roster" in entries["9999"].problem
    assert any("submission_1005/" in n for n in found.notes)


def test_a_gradescope_metadata_file_that_is_not_yaml_is_one_line(tmp_path: Path) -> None:
    write(tmp_path / "export" / "submission_metadata.yml", "submission_1: [unclosed\n")
    with pytest.raises(intake.IntakeError) as info:
        intake.scan(tmp_path / "export", "attention.py", tmp_path / "unzip")
    assert "submission_metadata.yml: cannot read it" in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------ Moodle

MOODLE_WORKSHEET = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    "Participant 1234567,Jane Doe,jane@uni.edu,Submitted for grading,,100.00,Yes,-,-,\n"
    "Participant 1234568,Bob Smith,bob@uni.edu,Submitted for grading,,100.00,Yes,-,-,\n"
    "Participant 1234569,Ann Lee,ann@uni.edu,Submitted for grading,,100.00,Yes,-,-,\n"
    "Participant 1234570,Dee Missing,dee@uni.edu,No submission,,100.00,Yes,-,-,\n"
)


def moodle_download(root: Path) -> Path:
    """Folders per student and plugin; Ann's as a flat file ("Download submissions in folders" off)."""
    write(root / "Jane Doe_1234567_assignsubmission_file_" / "attention.py", REFERENCE)
    write(root / "Jane Doe_1234567_assignsubmission_onlinetext_" / "onlinetext.html", "<p>see file</p>")
    write(root / "Bob Smith_1234568_assignsubmission_file_" / "Week 3" / "attention.py", STUB)
    write(root / "Ann Lee_1234569_assignsubmission_file_attention.py", REFERENCE)
    write(root / "Zed Other_1234999_assignsubmission_file_" / "attention.py", REFERENCE)
    return root


def test_a_moodle_download_maps_participant_ids_through_the_grading_worksheet(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "worksheet.csv", MOODLE_WORKSHEET))
    assert roster.source == "Moodle grading worksheet" and roster.id_column == "Email address"
    assert roster.entries[0].participant == "1234567"
    found = intake.scan(moodle_download(tmp_path / "download"), "attention.py", tmp_path / "unzip",
                        list(roster.entries))
    assert found.layout == "moodle"
    entries = by_student(found)
    assert sorted(entries) == ["Zed Other_1234999", "ann@uni.edu", "bob@uni.edu", "jane@uni.edu"]
    assert entries["jane@uni.edu"].file == "Jane Doe_1234567_assignsubmission_file_/attention.py"
    assert entries["bob@uni.edu"].file == "Bob Smith_1234568_assignsubmission_file_/Week 3/attention.py"
    assert entries["ann@uni.edu"].file == "Ann Lee_1234569_assignsubmission_file_attention.py"
    assert "Moodle participant 1234999 (Zed Other) is not on the roster" in entries["Zed Other_1234999"].problem
    assert entries["jane@uni.edu"].submitted_at == "" and entries["jane@uni.edu"].late is None
    assert any("online text" in n for n in found.notes)  # the onlinetext folder is ignored, and said so


def test_a_moodle_participants_list_maps_by_full_name_and_refuses_a_shared_one(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "participants.csv", (
        "First name,Last name,ID number,Email address,Roles,Groups\n"
        "Jane,Doe,S1,jane@uni.edu,Student,A\n"
        "Bob,Smith,S2,bob@uni.edu,Student,A\n"
        "Bob,Smith,S3,bob2@uni.edu,Student,B\n"
        "Tea,Cher,T1,t@uni.edu,Teacher,\n")))
    assert roster.source == "Moodle participants list" and roster.id_column == "ID number"
    assert [e.student for e in roster.entries] == ["S1", "S2", "S3"]
    entries = by_student(intake.scan(moodle_download(tmp_path / "download"), "attention.py", tmp_path / "unzip",
                                     list(roster.entries)))
    assert entries["S1"].path is not None
    assert "matches more than one roster student by name (S2, S3)" in entries["Bob Smith_1234568"].problem


# ------------------------------------------------------------------ GitHub Classroom

CLASSROOM_ROSTER = ("identifier,github_username,github_id,name\n"
                    "jdoe@uni.edu,janedoe,101,Jane Doe\n"
                    "bsmith@uni.edu,bob-smith,102,Bob Smith\n"
                    "dee@uni.edu,,,Dee Missing\n")


def git(repo: Path, *args: str, when: str = "2024-03-01T12:00:00+01:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "s",
           "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@x",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def classroom_clones(root: Path) -> Path:
    """``gh classroom clone student-repos`` writes ``<slug>-submissions/<slug>-<username>/``."""
    write(root / "attention-janedoe" / "attention.py", REFERENCE)
    write(root / "attention-bob-smith" / "src" / "attention.py", STUB)  # a username with a hyphen
    write(root / "attention-outsider" / "attention.py", REFERENCE)
    if shutil.which("git"):
        repo = root / "attention-janedoe"
        git(repo, "init", "-q")
        git(repo, "add", "attention.py")
        git(repo, "commit", "-q", "-m", "done")
        hook = write(repo / ".git" / "hooks" / "post-checkout", f"#!/bin/sh\ntouch {root.parent / 'hook-ran'}\n")
        hook.chmod(0o755)
    return root


def test_github_classroom_clones_map_to_usernames_with_head_commit_times(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "classroom_roster.csv", CLASSROOM_ROSTER))
    assert roster.source == "GitHub Classroom roster" and roster.id_column == "identifier"
    found = intake.scan(classroom_clones(tmp_path / "attention-submissions"), "attention.py", tmp_path / "unzip",
                        list(roster.entries))
    assert found.layout == "classroom"
    entries = by_student(found)
    assert sorted(entries) == ["bsmith@uni.edu", "jdoe@uni.edu", "outsider"]
    assert entries["bsmith@uni.edu"].file == "attention-bob-smith/src/attention.py"
    assert "GitHub repository attention-outsider is not on the roster" in entries["outsider"].problem
    if shutil.which("git"):
        assert entries["jdoe@uni.edu"].submitted_at == "2024-03-01T12:00:00+01:00"
        assert entries["bsmith@uni.edu"].submitted_at == ""  # no .git there: left empty, and said so
        assert any("no HEAD commit time" in n for n in found.notes)
    assert not (tmp_path / "hook-ran").exists()


def test_a_plain_roster_login_column_is_the_github_username(tmp_path: Path) -> None:
    roster = load_roster(write(tmp_path / "r.csv", "login,name\njanedoe,Jane\nbob-smith,Bob\n"))
    assert roster.id_column == "login" and roster.entries[0].github == "janedoe"
    entries = by_student(intake.scan(classroom_clones(tmp_path / "c"), "attention.py", tmp_path / "u",
                                     list(roster.entries)))
    assert {"janedoe", "bob-smith"} <= set(entries) and entries["janedoe"].path is not None


# ------------------------------------------------------------------ --layout, folders, rosters


def test_layout_forces_how_a_download_is_read(tmp_path: Path) -> None:
    write(tmp_path / "c" / "hw-alice" / "attention.py", REFERENCE)
    write(tmp_path / "c" / "hw-bob" / "attention.py", REFERENCE)
    assert intake.scan(tmp_path / "c", "attention.py", tmp_path / "u").layout == "classroom"
    assert sorted(by_student(intake.scan(tmp_path / "c", "attention.py", tmp_path / "u"))) == ["alice", "bob"]
    forced = intake.scan(tmp_path / "c", "attention.py", tmp_path / "u", layout="folders")
    assert forced.layout == "folders" and sorted(by_student(forced)) == ["hw-alice", "hw-bob"]
    roster = [RosterEntry("hw-alice"), RosterEntry("hw-bob")]  # folders named by the roster are read as folders
    assert intake.scan(tmp_path / "c", "attention.py", tmp_path / "u", roster).layout == "folders"
    with pytest.raises(intake.IntakeError, match="no submission_metadata.yml"):
        intake.scan(tmp_path / "c", "attention.py", tmp_path / "u", layout="gradescope")


def test_a_plain_folder_keeps_its_rule_and_names_students_off_the_roster(tmp_path: Path) -> None:
    write(tmp_path / "c" / "alice.py", REFERENCE)
    write(tmp_path / "c" / "zoe" / "attention.py", REFERENCE)
    found = intake.scan(tmp_path / "c", "attention.py", tmp_path / "u", [RosterEntry("alice")])
    assert found.layout == "folders" and sorted(by_student(found)) == ["alice", "zoe"]
    assert by_student(found)["zoe"].path is not None  # the name is the id: graded, and named in a note
    assert any("not on the roster" in n and "zoe" in n for n in found.notes)


@pytest.mark.parametrize("text, column, source", [
    ("id,name,email\n7,Ada,ada@x\n", "id", "plain CSV"),
    ("\ufeff Student_ID ,Name\nS1,Ada\n", "Student_ID", "plain CSV"),
    ("email\nada@x\n", "email", "plain CSV"),
    ("SIS_Login_ID,section\nada,A\n", "SIS_Login_ID", "plain CSV"),
])
def test_plain_rosters_accept_the_usual_id_columns(tmp_path: Path, text: str, column: str, source: str) -> None:
    roster = load_roster(write(tmp_path / "r.csv", text))
    assert (roster.id_column, roster.source, len(roster.entries)) == (column, source, 1)


def test_an_unknown_roster_layout_is_one_line_naming_found_and_accepted_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "Vorname,Nachname\nAda,L\n")
    with pytest.raises(RosterError) as info:
        load_roster(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and "'Vorname', 'Nachname'" in text
    assert "Canvas gradebook export" in text and "student, id, student_id, login, sis_login_id, email" in text


def test_a_roster_id_that_cannot_name_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RosterError, match="line 2: student id '../x' cannot name a file"):
        load_roster(write(tmp_path / "r.csv", "student\n../x\n"))


def test_grade_all_with_an_unknown_roster_exits_2_before_writing_anything(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    write(tmp_path / "c" / "alice.py", REFERENCE)
    roster = write(tmp_path / "r.csv", "Vorname,Nachname\nAda,L\n")
    code = cli.main(["grade-all", str(tmp_path / "c"), "--assignment", "attention", "--out", str(tmp_path / "out"),
                     "--roster", str(roster)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unknown roster layout" in err
    assert not (tmp_path / "out").exists()


def test_rows_keep_submission_times_and_old_records_still_load() -> None:
    row = Row("jdoe", "graded", "f.py", "x", 1.0, 2.0, submitted_at="2024-03-01T12:00:00+01:00", late=True)
    assert Row.from_dict(json.loads(json.dumps(row.to_dict()))) == row
    old = {k: v for k, v in row.to_dict().items() if k not in ("submitted_at", "late")}  # a record from before
    assert Row.from_dict(old).submitted_at == "" and Row.from_dict(old).late is None


# ------------------------------------------------------------------ end to end


def test_grade_all_on_a_canvas_zip_with_its_gradebook_export(tmp_path: Path) -> None:
    roster = write(tmp_path / "gradebook.csv", CANVAS_GRADEBOOK)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(canvas_zip(tmp_path / "s.zip")),
                           "--assignment", "attention", "--out", str(out), "--roster", str(roster), "--jobs", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "roster: 4 students, id column `SIS Login ID` (Canvas gradebook export)" in proc.stderr
    assert "submissions: Canvas download" in proc.stderr
    with (out / "gradebook.csv").open(newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert rows["jdoe"]["status"] == "graded" and rows["jdoe"]["score"] == rows["jdoe"]["max_score"]
    assert rows["bsmith"]["status"] == "graded" and rows["bsmith"]["file"].endswith("attention-2.py")
    assert rows["ccarl"]["status"] == "missing" and rows["alee"]["status"] == "error"
    assert rows["strangerx_77777"]["status"] == "error" and "not on the roster" in rows["strangerx_77777"]["message"]
    record = json.loads((out / "records" / "jdoe.json").read_text())["row"]
    assert record["late"] is True and record["submitted_at"] == ""
    assert json.loads((out / "records" / "bsmith.json").read_text())["row"]["late"] is False


def test_detect_reads_nothing_but_names(tmp_path: Path) -> None:
    """Recognising a layout looks at names (and a Gradescope export's metadata file), never at submissions."""
    write(tmp_path / "d" / "doejane_12345_1_attention.py", "raise SystemExit\n")
    assert lms.detect(tmp_path / "d") == "canvas"


def test_a_link_in_an_lms_download_is_refused_for_the_student_it_belongs_to(tmp_path: Path) -> None:
    """``grader.links`` finds the link; the layout says whose it is, and nothing of it is read."""
    export = tmp_path / "export"
    write(export / "submission_metadata.yml", GRADESCOPE_METADATA)
    write(export / "submission_1001" / "notes.txt", "")
    (export / "submission_1001" / "attention.py").symlink_to("/etc/passwd")
    entries = by_student(intake.scan(export, "attention.py", tmp_path / "u"))
    assert entries["1001"].path is None and entries["1001"].file == "submission_1001/attention.py"
    assert entries["1001"].problem.startswith("submission_1001/attention.py is a symbolic link (to /etc/passwd)")
    canvas = tmp_path / "canvas"
    write(canvas / "smithbob_23456_1_attention.py", REFERENCE)
    canvas.joinpath("doejane_12345_1_attention.py").symlink_to(ROOT / "solutions" / "attention.py")
    entries = by_student(intake.scan(canvas, "attention.py", tmp_path / "u2"))
    assert entries["doejane_12345"].path is None and "is a symbolic link" in entries["doejane_12345"].problem
    assert entries["smithbob_23456"].path is not None
