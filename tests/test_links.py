"""Nothing is read outside the class: a symbolic link in a submission is named and refused, never followed.

A link named ``attention.py`` to the grader's own ``solutions/attention.py``
used to score 137.5/137.5, and one to ``/etc/passwd`` was read and graded.
Here each way a link reaches the grader (a class folder, a zip whose member
is a link, ``grader ci``'s files, a Gradescope submission, ``grader grade``
on the link itself) is refused with one line that names the link, and the
students without links are graded as before. Hard links are the file itself
and are graded.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import cli, links
from grader.batch import intake
from grader.coursedata import unzip
from grader.ci import CIError, Environment, select
from grader.config import load_config
from grader.release import gradescope_run
from grader.submission import UnreadableSubmission, load_submission
from tests.conftest import ROOT
from tests.test_gradescope_bundle import autograder, layout, run_autograder  # noqa: F401 - the fixture too

SOLUTION = ROOT / "solutions" / "attention.py"
REFERENCE = SOLUTION.read_text()
STUB = (ROOT / "exercises" / "attention.py").read_text()
NEVER = "submissions are never read through links"


def grade_all(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", *map(str, args), "--assignment",
                           "attention", "--jobs", "1"], capture_output=True, text=True, cwd=ROOT, timeout=600)


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def linked_class(root: Path, outside: Path) -> Path:
    """A class with every kind of link, one student graded normally, and one who hard-linked a file."""
    outside.mkdir()
    (outside / "attention.py").write_text(REFERENCE)
    root.mkdir()
    (root / "alice").mkdir()
    (root / "alice" / "attention.py").symlink_to(os.path.relpath(SOLUTION, root / "alice"))  # the grader's own
    (root / "bob.py").symlink_to("/etc/passwd")
    (root / "carol").symlink_to(outside, target_is_directory=True)  # a student folder that is a link
    (root / "dave").mkdir()
    (root / "dave" / "work").symlink_to(outside, target_is_directory=True)  # a link in a parent folder
    (root / "erin").mkdir()
    (root / "erin" / "attention.py").write_text(REFERENCE)
    (root / "erin" / "data").symlink_to("/tmp")  # a link beside a real file: refused all the same
    (root / "gus").mkdir()
    (root / "gus" / "attention.py").write_text(REFERENCE)  # graded
    (root / "hana").mkdir()
    os.link(outside / "attention.py", root / "hana" / "attention.py")  # a hard link is the file: graded
    (root / "__MACOSX").mkdir()
    (root / "__MACOSX" / "alice").symlink_to("/etc")  # ignored folders are never read, so not reported
    return root


def link_zip(archive: Path) -> Path:
    """An LMS download made on Unix: one top folder, a regular file, and link members (mode S_IFLNK)."""
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Course 101/gus/attention.py", REFERENCE)
        for name, target in (("Course 101/alice/attention.py", "../../../solutions/attention.py"),
                             ("Course 101/bob.py", "/etc/passwd")):
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return archive


# ------------------------------------------------------------------ grader.links


def test_find_links_names_every_link_and_enters_none(tmp_path: Path) -> None:
    klass = linked_class(tmp_path / "class", tmp_path / "outside")
    found = {link.path: link.target for link in links.find_links(klass, skip=lambda n: n.startswith((".", "_")))}
    assert found == {"alice/attention.py": os.path.relpath(SOLUTION, klass / "alice"), "bob.py": "/etc/passwd",
                     "carol": str(tmp_path / "outside"), "dave/work": str(tmp_path / "outside"),
                     "erin/data": "/tmp"}  # nothing under carol/ or dave/work/, nothing under __MACOSX


def test_open_file_refuses_a_link_and_a_linked_parent_but_reads_a_hard_link(tmp_path: Path) -> None:
    klass = linked_class(tmp_path / "class", tmp_path / "outside")
    with pytest.raises(links.LinkRefused, match=r"alice/attention\.py is a symbolic link \(to .*solutions"):
        links.open_file(klass / "alice" / "attention.py")
    with pytest.raises(links.LinkRefused, match=r"^dave/work is a symbolic link"):
        links.open_file(klass / "dave" / "work" / "attention.py", under=klass)
    with pytest.raises(links.LinkRefused, match=r"^carol is a symbolic link"):
        links.open_file(klass / "carol" / "attention.py", under=klass)
    with links.open_file(klass / "hana" / "attention.py", under=klass) as f:
        assert f.read() == REFERENCE.encode()
    dangling = tmp_path / "gone.py"
    dangling.symlink_to(tmp_path / "nothing-here")
    with pytest.raises(links.LinkRefused):
        links.open_file(dangling)


def test_open_file_reads_only_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "attention.py"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    with pytest.raises(OSError, match="not a regular file"):
        links.open_file(fifo)
    with pytest.raises(IsADirectoryError):
        links.open_file(tmp_path)


def test_a_zip_member_is_a_link_by_its_unix_mode(tmp_path: Path) -> None:
    with zipfile.ZipFile(link_zip(tmp_path / "c.zip")) as z:
        assert [i.filename for i in z.infolist() if links.zip_member_is_link(i)] == [
            "Course 101/alice/attention.py", "Course 101/bob.py"]
        unpacked = unzip.unpack(z, tmp_path / "unzip")  # the links are read from the zip, never made
        assert [(k.path, k.target) for k in unpacked.links] == [
            ("Course 101/alice/attention.py", "../../../solutions/attention.py"), ("Course 101/bob.py", "/etc/passwd")]


def test_a_message_is_one_line_whatever_the_link_holds(tmp_path: Path) -> None:
    odd = tmp_path / "attention.py"
    odd.symlink_to("x\n::error::forged\r" + "y" * 500)
    [link] = links.find_links(tmp_path)
    said = links.message([link, link, link])
    assert "\n" not in said and "\r" not in said and len(said) < 400
    assert said.startswith("attention.py is a symbolic link (to x?::error::forged?yyy") and ", and 2 more links;" in said


# ------------------------------------------------------------------ grade-all: intake and the gradebook


def test_intake_gives_each_linked_student_an_error_row_naming_the_link(tmp_path: Path) -> None:
    klass = linked_class(tmp_path / "class", tmp_path / "outside")
    entries = {e.student: e for e in intake.discover(klass, "attention.py", tmp_path / "unzip")}
    assert sorted(entries) == ["alice", "bob", "carol", "dave", "erin", "gus", "hana"]
    for student, link in (("alice", "alice/attention.py"), ("bob", "bob.py"), ("carol", "carol"),
                          ("dave", "dave/work"), ("erin", "erin/data")):
        entry = entries[student]
        assert entry.path is None and entry.file == link, entry
        assert entry.problem.startswith(f"{link} is a symbolic link (to ") and entry.problem.endswith(
            f"; {NEVER}: submit the file itself")
    assert entries["gus"].path == klass / "gus" / "attention.py" and not entries["gus"].problem
    assert entries["hana"].path == klass / "hana" / "attention.py" and not entries["hana"].problem


def test_a_zips_link_members_are_reported_and_never_unpacked(tmp_path: Path) -> None:
    unzip = tmp_path / "unzip"
    unzip.mkdir()
    entries = {e.student: e for e in intake.discover(link_zip(tmp_path / "c.zip"), "attention.py", unzip)}
    assert entries["alice"].path is None and entries["alice"].problem == (
        f"alice/attention.py is a symbolic link (to ../../../solutions/attention.py); {NEVER}: submit the file itself")
    assert entries["bob"].path is None and entries["bob"].problem.startswith("bob.py is a symbolic link (to /etc/passwd)")
    assert entries["gus"].path is not None and entries["gus"].path.read_text() == REFERENCE
    made = sorted(p.relative_to(unzip).as_posix() for p in unzip.rglob("*"))
    assert made == ["Course 101", "Course 101/gus", "Course 101/gus/attention.py"]  # no link, no stand-in file


def test_grade_all_refuses_every_link_and_grades_the_others(tmp_path: Path) -> None:
    klass = linked_class(tmp_path / "class", tmp_path / "outside")
    proc = grade_all(klass, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr  # input problems are rows, as two files are
    got = rows(tmp_path / "out")
    for student in ("alice", "bob", "carol", "dave", "erin"):
        row = got[student]
        assert row["status"] == "error" and row["score"] == "" and NEVER in row["message"], row
        assert row["message"].startswith(f"{row['file']} is a symbolic link (to ")
        assert not (tmp_path / "out" / "cards" / f"{student}.json").exists()
    assert got["alice"]["file"] == "alice/attention.py" and "solutions/attention.py" in got["alice"]["message"]
    assert got["bob"]["message"].startswith("bob.py is a symbolic link (to /etc/passwd)")
    for student in ("gus", "hana"):
        assert got[student]["status"] == "graded" and float(got[student]["score"]) == float(got[student]["max_score"])
    everything = (tmp_path / "out" / "gradebook.csv").read_text() + proc.stdout + proc.stderr
    assert "root:x:" not in everything  # /etc/passwd was never read


def test_grade_all_on_a_zip_with_a_link_member(tmp_path: Path) -> None:
    proc = grade_all(link_zip(tmp_path / "c.zip"), "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    got = rows(tmp_path / "out")
    assert got["alice"]["status"] == "error" and got["alice"]["file"] == "alice/attention.py"
    assert got["alice"]["message"].startswith("alice/attention.py is a symbolic link (to ../../../solutions/")
    assert got["bob"]["status"] == "error" and "/etc/passwd" in got["bob"]["message"]
    assert got["gus"]["status"] == "graded" and got["gus"]["score"] == got["gus"]["max_score"]


# ------------------------------------------------------------------ grader grade, load_submission


def test_grader_grade_on_a_link_exits_2_with_one_line(tmp_path: Path) -> None:
    link = tmp_path / "attention.py"
    link.symlink_to(SOLUTION)
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(link), "--assignment", "attention",
                           "--out", str(tmp_path / "card.json")], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 2 and not (tmp_path / "card.json").exists()
    assert proc.stderr == f"grader: {link} is a symbolic link (to {SOLUTION}); {NEVER}: submit the file itself\n"


def test_load_submission_refuses_a_link_itself(tmp_path: Path) -> None:
    link = tmp_path / "attention.ipynb"
    link.symlink_to(SOLUTION)
    with pytest.raises(UnreadableSubmission, match="is a symbolic link"):
        load_submission(link)
    with pytest.raises(UnreadableSubmission, match="cannot read .*: No such file"):
        load_submission(tmp_path / "missing.py")


# ------------------------------------------------------------------ grader ci


def ci_repo(root: Path) -> Path:
    root.mkdir()
    (root / "README.md").write_text("my work\n")
    return root


@pytest.mark.parametrize("make, named", [
    (lambda r: (r / "attention.py").symlink_to(SOLUTION), "attention.py"),
    (lambda r: (r / "attention.ipynb").symlink_to(r), "attention.ipynb"),  # a link to a folder
    (lambda r: ((r / "attention.py").write_text(REFERENCE),
                (r / "attention_modules.py").symlink_to("/etc/passwd")), "attention_modules.py"),
])
def test_grader_ci_refuses_a_linked_target_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch, make, named: str) -> None:
    for key in [k for k in os.environ if k.startswith(("GITHUB_", "GITLAB"))]:
        monkeypatch.delenv(key)
    repo = ci_repo(tmp_path / "repo")
    make(repo)
    assert cli.main(["ci", "--root", str(repo)]) == 2  # fails closed: nothing graded, the job fails
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"grader: {named} is a symbolic link (to ")
    assert f"{NEVER}: commit the file itself" in err and "nothing was graded" in err
    assert not (repo / "grader-results").exists()


def test_grader_ci_takes_a_root_that_is_itself_a_link(tmp_path: Path) -> None:
    repo = ci_repo(tmp_path / "repo")
    (repo / "attention.py").write_text(REFERENCE)
    (tmp_path / "workspace").symlink_to(repo, target_is_directory=True)  # where the runner put it: not a submission
    env = Environment("shell", tmp_path / "workspace", tmp_path / "workspace")
    assert [t.rel for t in select(env, load_config(), all_files=True).targets] == ["attention.py"]
    (repo / "attention.py").unlink()
    (repo / "attention.py").symlink_to(SOLUTION)
    with pytest.raises(CIError, match="attention.py is a symbolic link"):
        select(env, load_config(), all_files=True)


# ------------------------------------------------------------------ Gradescope


def test_gradescope_says_why_a_link_to_the_reference_is_not_graded(autograder: Path, tmp_path: Path) -> None:  # noqa: F811
    root = layout(autograder, tmp_path / "autograder", {})
    (root / "submission" / "attention.py").symlink_to(root / "source" / "solutions" / "attention.py")
    data = run_autograder(root)
    assert data["score"] == 0 and data["tests"] == [] and "Traceback" not in data["output"]
    assert data["output"].startswith("Expected attention.py (or attention.ipynb) in your submission as a file, but "
                                     "it holds a symbolic link: attention.py (to ")
    assert "Submissions are never read through links: upload attention.py itself" in data["output"]


@pytest.mark.parametrize("make, named", [
    (lambda s: (s / "hw").symlink_to("/etc", target_is_directory=True), "hw (to /etc)"),  # a linked folder
    (lambda s: ((s / "attention.py").write_text(REFERENCE), (s / "notes.txt").symlink_to("/etc/passwd")),
     "notes.txt (to /etc/passwd)"),  # beside the real file: still refused
    (lambda s: ((s / "repo").mkdir(), (s / "repo" / "attention.ipynb").symlink_to("missing")),
     "repo/attention.ipynb (to missing)"),  # dangling, deeper
])
def test_gradescope_refuses_any_link_in_the_submission_with_score_0(tmp_path: Path, make, named: str) -> None:
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    make(root / "submission")
    # The grader is never started: the link is refused first (an empty --grader would otherwise be the message).
    assert gradescope_run.main(["--root", str(root), "--grader", "", "--assignment", "attention",
                                "--file", "attention.py"]) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and f"it holds a symbolic link: {named}." in data["output"]
    assert "not installed" not in data["output"]


def test_gradescope_ignores_links_in_folders_it_never_reads(tmp_path: Path) -> None:
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "attention.py").symlink_to(SOLUTION)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x").symlink_to("/etc")
    (tmp_path / "attention.py").write_text(REFERENCE)
    assert gradescope_run.pick(tmp_path, "attention.py") == tmp_path / "attention.py"
