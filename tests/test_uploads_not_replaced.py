"""Uploads never overwrite each other, and nothing is dropped in silence (issue 37).

Families of zips built here with hostile member names (``..``, roots, Windows forms, names that
land on another member's file) and LMS downloads with several uploads per student: nobody's file
is replaced, nothing hostile is written anywhere, and every member or upload that is not graded
has exactly one ``NotGraded`` entry naming it (what ``grade-all`` says on stderr and keeps in
summary.json's ``not_graded``: the end-to-end test at the bottom).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from grader import links
from grader.batch import intake
from grader.coursedata import unzip
from tests.conftest import ROOT

REAL = "# alice's own work\ndef softmax(x):\n    return x\n"
BOB = "# bob's work\ndef softmax(x):\n    return x\n"
HOSTILE = "# HOSTILE: must never be unpacked or graded\n"

# Each hostile form, with a target that would land on alice's file if its name were "cleaned".
HOSTILE_NAMES = [
    "..", "../x", "a/../../b", "/x", "C:\\x", "\\\\server\\x",
    "../alice.py", "../../alice.py", "..\\alice.py", "/alice.py", "//alice.py", "C:\\alice.py", "c:alice.py",
    "\\alice.py", "\\\\server\\share\\alice.py", "alice/../alice.py", "x/../../alice.py", "./../alice.py",
    "../../evil.py", "/etc/evil.py", "D:/class/alice.py",
]


def build_zip(path: Path, members: list[tuple[str, str]]) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name": the point of some tests
        with zipfile.ZipFile(path, "w") as z:
            for name, text in members:
                z.writestr(zipfile.ZipInfo(name), text)  # ZipInfo: the name exactly as given
    return path


def everything_written(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` but the zips themselves, by path."""
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*")
            if p.is_file() and p.suffix != ".zip"}


def lines_naming(found: intake.Intake, member: str) -> list[str]:
    shown = links.printable(member)
    return [n.line() for n in found.not_graded if n.file == shown]


@pytest.mark.parametrize("top", ["", "Course 101/"])
@pytest.mark.parametrize("hostile", HOSTILE_NAMES)
def test_a_hostile_member_is_refused_in_one_line_and_replaces_nobody(tmp_path, hostile, top):
    for order in ("first", "last"):  # whichever comes first in the zip, alice keeps her own file
        real = [(f"{top}alice.py", REAL), (f"{top}bob/attention.py", BOB)]
        members = [(hostile, HOSTILE), *real] if order == "first" else [*real, (hostile, HOSTILE)]
        work = tmp_path / order
        unpack_to = work / "unzip"
        unpack_to.mkdir(parents=True)
        found = intake.scan(build_zip(work / "class.zip", members), "attention.py", unpack_to)
        entries = {e.student: e for e in found.entries}
        assert sorted(entries) == ["alice", "bob"], (hostile, order)
        assert entries["alice"].path is not None and entries["alice"].path.read_text() == REAL
        assert entries["bob"].path is not None and entries["bob"].path.read_text() == BOB
        written = everything_written(tmp_path)
        assert HOSTILE not in written.values(), written  # written nowhere, not even beside the unzip folder
        said = lines_naming(found, hostile)
        assert len(said) == 1 and "refused, written nowhere" in said[0], found.not_graded
        assert len(found.not_graded) == 1, found.not_graded


SAME_FILE = [  # members that all land on alice's file, whichever form each is written in
    ["alice.py", "alice.py"],
    ["alice.py", "./alice.py"],
    ["alice.py", "alice.py", "./alice.py"],
    ["alice/attention.py", "alice//attention.py"],
    ["alice/attention.py", "alice\\attention.py"],
    ["alice/attention.py", "./alice/./attention.py"],
]


@pytest.mark.parametrize("top", ["", "class/"])
@pytest.mark.parametrize("names", SAME_FILE, ids=" + ".join)
def test_members_that_land_on_one_file_are_all_refused_and_their_student_is_told(tmp_path, names, top):
    rng = random.Random(" ".join(names) + top)
    for attempt, order in enumerate(itertools.islice(itertools.permutations(range(len(names))), 4)):
        members = [(f"{top}{names[i]}", f"# upload {i}\n") for i in order] + [(f"{top}bob.py", BOB)]
        rng.shuffle(members)
        work = tmp_path / str(attempt)
        (work / "unzip").mkdir(parents=True)
        found = intake.scan(build_zip(work / "c.zip", members), "attention.py", work / "unzip")
        entries = {e.student: e for e in found.entries}
        assert sorted(entries) == ["alice", "bob"] and entries["bob"].path.read_text() == BOB
        alice = entries["alice"]
        assert alice.path is None and "none of them is graded" in alice.problem, alice  # never one over another
        assert "# upload" not in "".join(everything_written(work / "unzip").values())
        for name, _ in members:
            if name.endswith("bob.py"):
                continue
            # the same name twice is one line per member: as many lines as the zip holds it
            assert len(lines_naming(found, name)) == sum(n == name for n, _ in members), (name, found.not_graded)
        assert len(found.not_graded) == len(names)


def test_a_file_where_other_members_need_a_folder_is_refused(tmp_path):
    zipped = build_zip(tmp_path / "c.zip", [("alice", HOSTILE), ("alice/attention.py", REAL), ("bob.py", BOB)])
    found = intake.scan(zipped, "attention.py", tmp_path / "unzip")
    entries = {e.student: e for e in found.entries}
    assert entries["alice"].path is None and "none of them is graded" in entries["alice"].problem
    assert [n.file for n in found.not_graded] == ["alice"]
    assert HOSTILE not in everything_written(tmp_path / "unzip").values()


@pytest.mark.parametrize("name", ["../alice.py", "../../alice/attention.py", "/alice.py", "C:\\alice.py"])
def test_a_link_member_with_a_hostile_path_is_refused_and_blames_nobody(tmp_path, name):
    """A link member is never made (``grader.links``); one whose path leaves the folder is refused before
    that, so it cannot give alice, whose name its cleaned path would take, an error row."""
    link = zipfile.ZipInfo(name)
    link.external_attr = (0o120777 << 16)  # S_IFLNK: unzip would make it a symbolic link
    with zipfile.ZipFile(tmp_path / "c.zip", "w") as z:
        z.writestr("alice.py", REAL)
        z.writestr(link, "/etc/passwd")
    found = intake.scan(tmp_path / "c.zip", "attention.py", tmp_path / "unzip")
    (alice,) = found.entries
    assert alice.student == "alice" and alice.path is not None and alice.path.read_text() == REAL, alice
    assert [n.file for n in found.not_graded] == [name]


def test_member_paths_are_read_as_paths_never_cleaned():
    for name in HOSTILE_NAMES:
        assert isinstance(unzip.member_parts(name), str), name
    assert unzip.member_parts("alice\\attention.py") == ("alice", "attention.py")  # a Windows tool's separator
    assert unzip.member_parts("./alice//attention.py") == ("alice", "attention.py")
    assert unzip.member_parts("alice..py") == ("alice..py",)  # dots in a name are not a '..' part


# ------------------------------------------------------------------ several uploads per student


def canvas(user: str, original: str) -> str:
    return f"doejane_{user}_6789_{original}"


@pytest.mark.parametrize("uploads", [1, 2, 3, 5])
@pytest.mark.parametrize("extra", [(), ("notes.txt",), ("helpers.py", "notes.txt"), ("helpers.py", "helpers-1.py")])
def test_each_canvas_upload_not_graded_is_named_once_with_the_one_graded(tmp_path, uploads, extra):
    names = ["attention.py"] + [f"attention-{n}.py" for n in range(1, uploads)]
    members = [(canvas("12345", n), f"# {n}\n") for n in [*names, *extra]]
    random.Random(uploads).shuffle(members)  # the zip's order says nothing about which came last
    members.append((canvas("23456", "attention.py"), BOB))
    found = intake.scan(build_zip(tmp_path / "c.zip", members), "attention.py", tmp_path / "unzip")
    assert found.layout == "canvas"
    latest = canvas("12345", names[-1])
    entries = {e.student: e for e in found.entries}
    assert entries["doejane_12345"].file == latest
    passed_over = [canvas("12345", n) for n in [*names[:-1], *extra]]
    assert sorted(n.file for n in found.not_graded) == sorted(passed_over)
    for item in found.not_graded:
        assert item.student == "doejane_12345" and f"{latest}, is graded" in item.why or (
            item.why.endswith(f"; {latest} is graded"))
        if "attention" in item.file:
            assert item.why == f"an older upload of attention.py; the latest, {latest}, is graded"
        elif item.file.endswith("_helpers.py") and "helpers-1.py" in extra:  # older, and not the graded one
            assert item.why == (f"an older upload of helpers.py (the latest is {canvas('12345', 'helpers-1.py')}); "
                                f"{latest} is graded")


SECOND_FILES = [["helpers.py"], ["notes.py", "scratch.ipynb"], ["sub/extra.py"]]
# A flat Moodle download has no folders, so it is not given the one set with a subfolder.
SECOND_FILE_CASES = [(layout, others) for layout in ["folders", "moodle-folder", "moodle-flat", "gradescope"]
                     for others in SECOND_FILES if not (layout == "moodle-flat" and any("/" in f for f in others))]


@pytest.mark.parametrize(("layout", "others"), SECOND_FILE_CASES)
def test_a_second_file_of_one_student_is_named_with_the_file_graded(tmp_path, layout, others):
    root = tmp_path / "download"
    files = ["attention.py", *others]
    prefix = {"folders": "alice/", "moodle-folder": "Jane Doe_1234567_assignsubmission_file_/",
              "moodle-flat": "Jane Doe_1234567_assignsubmission_file_", "gradescope": "submission_1001/"}[layout]
    for name in files:
        path = root / f"{prefix}{name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
    if layout == "gradescope":
        (root / "submission_metadata.yml").write_text(
            "submission_1001:\n  :submitters:\n  - :name: Jane Doe\n    :sid: '1001'\n")
    found = intake.scan(root, "attention.py", tmp_path / "unzip")
    (entry,) = found.entries
    assert entry.path is not None and entry.path.name.endswith("attention.py") and entry.path.read_text() == (
        "# attention.py\n")
    assert sorted(n.file for n in found.not_graded) == sorted(f"{prefix}{o}" for o in others)
    for item in found.not_graded:
        assert item.student == entry.student and entry.file in item.why, item


def test_a_canvas_student_with_two_different_files_is_still_an_error_and_no_line_repeats_it(tmp_path):
    members = [(canvas("12345", "mine.py"), "# a\n"), (canvas("12345", "other.py"), "# b\n")]
    found = intake.scan(build_zip(tmp_path / "c.zip", members), "attention.py", tmp_path / "unzip")
    (entry,) = found.entries
    assert entry.path is None and "more than one submission" in entry.problem  # the row names both
    assert found.not_graded == []


# ------------------------------------------------------------------ end to end: stderr and summary.json


def test_grade_all_says_each_passed_over_upload_once_and_keeps_it_in_the_summary(tmp_path):
    hostile = ["../alice.py", "../../evil.py", "C:\\alice.py"]
    members = [("alice.py", REAL), *((h, HOSTILE) for h in hostile), ("bob/attention.py", BOB),
               ("bob/notes.py", "# scratch\n")]
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(build_zip(tmp_path / "c.zip", members)),
                           "--assignment", "attention", "--out", str(tmp_path / "out"), "--progress", "lines"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    err = proc.stderr
    assert proc.returncode == 0, err
    for member in ["../alice.py", "../../evil.py", "C:\\alice.py", "bob/notes.py"]:
        said = [line for line in err.splitlines() if line.startswith(f"grader: not graded: {member}")]
        assert len(said) == 1, (member, err)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert sorted(n["file"] for n in summary["not_graded"]) == sorted(
        ["../alice.py", "../../evil.py", "C:\\alice.py", "bob/notes.py"])
    assert [n["student"] for n in summary["not_graded"] if n["file"] == "bob/notes.py"] == ["bob"]
    rows = {r.split(",")[0]: r.split(",") for r in (tmp_path / "out" / "gradebook.csv").read_text().splitlines()[1:]}
    assert sorted(rows) == ["alice", "bob"]  # no student called "evil"
    assert rows["alice"][2] == hashlib.sha256(REAL.encode()).hexdigest()  # graded on her own file
