"""What a re-grade changed (``grader.batch.changes``): changes.csv, the instructor page's section, ``--dry-run``.

A class of three (the reference, the stub, a mutant whose softmax is right)
is graded once; then a point value changes in a copy of assignments.yaml, and the class is
re-graded with it: a dry run, the real run, and a forced run after that, each once (``regrades``).
Those runs are also where the suite shows that a config change and ``--force`` re-grade every card
(``tests/test_batch.py`` leaves both to them rather than grading its class twice more).
"""

from __future__ import annotations

import csv
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from grader.batch import changes
from grader.export.gradebook import Row
from tests.conftest import ROOT
from tests.corpus_cases import corpus

CHECK = "test_rows_sum_to_one"  # softmax; the reference and the mutant pass it, the stub does not
MUTANT = "attention_never_scales"


def grade_all(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)


def tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (path -> sha256), and every folder: "byte-identical" in one value."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


def read_changes(out: Path) -> list[dict[str, str]]:
    with (out / "changes.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("class") / "submissions"
    root.mkdir()
    (root / "alice.py").write_text((ROOT / "solutions/attention.py").read_text())
    (root / "bob.py").write_text((ROOT / "exercises/attention.py").read_text())
    (root / "carol.py").write_text(next(c for c in corpus("mutants") if c.path.stem == MUTANT).source())
    return root


@pytest.fixture(scope="module")
def config() -> Iterator[tuple[Path, float, float]]:
    """A copy of assignments.yaml (beside it: its paths are relative) with softmax's CHECK worth 3 more."""
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    checks = raw["assignments"]["attention"]["exercises"]["softmax"]["checks"]
    old = checks[CHECK]["points"] if isinstance(checks[CHECK], dict) else checks[CHECK]
    if isinstance(checks[CHECK], dict):
        checks[CHECK]["points"] = old + 3
    else:
        checks[CHECK] = old + 3
    path = ROOT / f".test-changes-config-{os.getpid()}.yaml"
    path.write_text(yaml.safe_dump(raw))
    try:
        yield path, float(old), float(old + 3)
    finally:
        path.unlink()


@pytest.fixture(scope="module")
def first(klass: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "graded"
    proc = grade_all(klass, "--assignment", "attention", "--out", out, "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "changes.csv").exists()  # a first grading compares nothing: no list, not an empty one
    assert "first grading in this folder: no earlier scores to compare" in proc.stderr
    page = (out / "reports" / "_index.html").read_text()  # the class page says what the command line says
    assert "No earlier grading in this folder to compare with" in page and "No score changed." not in page
    return out


@dataclass(frozen=True)
class Regrades:
    """The re-grades of ``first`` with the changed config, in order, and what each left to read."""

    scores: dict[str, float]  # the first grading's
    unchanged_by_dry_run: bool  # every file and folder of --out as before the dry run, byte for byte
    dry: subprocess.CompletedProcess
    real: subprocess.CompletedProcess
    changed: list[dict[str, str]]  # changes.csv after the real run
    page: str  # the instructor page after the real run
    forced: subprocess.CompletedProcess  # --force: every card graded again, no score changed
    forced_changes: str
    forced_page: str


@pytest.fixture(scope="module")
def regrades(klass: Path, first: Path, config: tuple[Path, float, float]) -> Regrades:
    """The dry run, the real re-grade and a forced one after it, each run once for the module's tests
    (a grade-all costs a grader process's start): what each left is kept here, so no test reads a
    folder a later run changed."""
    path, _, _ = config
    scores = {r["student"]: float(r["score"]) for r in csv.DictReader((first / "gradebook.csv").open())}
    before = tree(first)
    dry = grade_all(klass, "--assignment", "attention", "--out", first, "--config", path, "--jobs", "1", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    unchanged = tree(first) == before
    real = grade_all(klass, "--assignment", "attention", "--out", first, "--config", path, "--jobs", "1")
    assert real.returncode == 0, real.stderr
    changed, page = read_changes(first), (first / "reports" / "_index.html").read_text()
    forced = grade_all(klass, "--assignment", "attention", "--out", first, "--config", path, "--jobs", "1", "--force")
    assert forced.returncode == 0, forced.stderr
    return Regrades(scores, unchanged, dry, real, changed, page, forced, (first / "changes.csv").read_text(),
                    (first / "reports" / "_index.html").read_text())


def test_a_point_change_lists_exactly_whose_score_changed_and_dry_run_writes_nothing(
        regrades: Regrades, first: Path, config: tuple[Path, float, float]) -> None:
    _, old, new = config
    assert regrades.unchanged_by_dry_run  # byte for byte: nothing written, nothing removed
    assert "graded 3, unchanged (skipped) 0" in regrades.dry.stderr

    assert "2 score(s) changed" in regrades.real.stderr
    rows = regrades.changed
    assert [r["student"] for r in rows] == ["alice", "carol"]  # bob's stub fails CHECK: 0 before, 0 after
    for r in rows:
        assert float(r["old_score"]) == regrades.scores[r["student"]]
        assert float(r["new_score"]) == regrades.scores[r["student"]] + 3
        assert r["delta"] == "+3"
        assert r["reason"] == changes.GRADER_CHANGED
        assert r["checks"] == f"softmax::{CHECK}: {old:g}→{new:g}"
    printed = [line.strip() for line in regrades.dry.stdout.splitlines()]
    assert printed[0] == f"dry run: nothing written in {first}"
    assert printed[1] == "2 score(s) changed:"
    assert printed[2:] == [f"{r['student']}: {r['old_score']} → {r['new_score']} ({r['delta']}), {r['reason']}; "
                           f"{r['checks']}" for r in rows]  # the list the real run then wrote
    assert "What the last re-grade changed" in regrades.page
    assert f"softmax::{CHECK}: {old:g}→{new:g}" in regrades.page and "+3" in regrades.page


def test_a_change_to_the_assignment_config_regrades_everyone(regrades: Regrades) -> None:
    """The config's fingerprint is in every card's key: a point value changed, no card is skipped, the
    stub's (whose score the change leaves as it was) included."""
    assert "graded 3, unchanged (skipped) 0" in regrades.real.stderr, regrades.real.stderr


def test_force_regrades_every_card_and_a_regrade_that_changes_nothing_lists_nobody(regrades: Regrades) -> None:
    """``--force`` after a run with the same files and config: every card graded again, none skipped, and
    since no score moved, changes.csv is its header and the page says so."""
    assert "graded 3, unchanged (skipped) 0" in regrades.forced.stderr, regrades.forced.stderr
    assert "no score changed" in regrades.forced.stderr
    assert regrades.forced_changes == ",".join(changes.COLUMNS) + "\n"  # the header only
    assert "No score changed." in regrades.forced_page


# ------------------------------------------------------------------ the comparison alone


def graded(student: str, score: float, sha: str, fp: str, checks: dict[str, float] | None = None) -> changes.Standing:
    row = Row(student, "graded", f"{student}.py", sha, score, 10.0, card=f"cards/{student}.json")
    return changes.Standing(row, f"{sha}:{fp}", checks)


def test_compare_names_the_checks_and_why() -> None:
    old = {"a": graded("a", 5, "s1", "f1", {"x::t": 1, "x::u": 4}),
           "b": graded("b", 5, "s2", "f1", {"x::t": 1}),
           "c": graded("c", 5, "s3", "f1"),
           "gone": graded("gone", 5, "s4", "f1")}
    new = {"a": graded("a", 7, "s1", "f2", {"x::t": 3, "x::u": 4}),
           "b": graded("b", 4, "s9", "f2", {"x::t": 0, "x::v": 4}),
           "c": graded("c", 5, "s7", "f1"),  # file changed, score did not: not listed
           "new": graded("new", 9, "s5", "f1"),  # graded for the first time: nothing to compare
           "gone": changes.Standing(Row("gone", "missing"), ":f1")}
    found = changes.compare(old, new)
    assert [(c.student, c.old_score, c.new_score, c.delta, c.reason) for c in found] == [
        ("a", 5, 7, 2, changes.GRADER_CHANGED), ("b", 5, 4, -1, changes.BOTH), ("gone", 5, None, None,
                                                                                 changes.FILE_CHANGED)]
    assert found[0].cells()["checks"] == "x::t: 1→3"
    assert found[1].cells()["checks"] == "x::t: 1→0; x::v: none→4"
    assert changes.csv_text(found).splitlines()[1:] == [
        "a,5,7,+2,x::t: 1→3,grader changed (fingerprint)",
        "b,5,4,-1,x::t: 1→0; x::v: none→4,both",
        "gone,5,,,,file changed"]
    assert changes.lines([]) == ["no score changed"]
    assert changes.compare(old, {s: old[s] for s in old}) == []


def test_a_formula_like_student_id_is_defused_in_the_csv() -> None:
    found = changes.compare({"=cmd": graded("=cmd", 1, "s", "f")}, {"=cmd": graded("=cmd", 2, "s", "f")})
    assert changes.csv_text(found).splitlines()[1] == "'=cmd,1,2,+1,,\"graded again (--force), same file and grader\""


def test_a_change_without_a_new_file_or_grader_names_the_override_or_the_late_policy() -> None:
    """Same file, same grader: a check's points moved only by an override; a new rule is the late policy."""
    from dataclasses import replace

    old = graded("a", 5, "s", "f", {"x::t": 1})
    override = graded("a", 7, "s", "f", {"x::t": 3})
    assert changes.compare({"a": old}, {"a": override})[0].reason == changes.OVERRIDE
    late_old = replace(old, row=replace(old.row, late_rule="submitted ...: on time"))
    late_new = replace(old, row=replace(old.row, score=4, late_rule="submitted ...: 1h late = -20%"))
    assert changes.compare({"a": late_old}, {"a": late_new})[0].reason == changes.LATE
    both = replace(override, row=replace(override.row, late_rule="an extension"))
    assert changes.compare({"a": late_old}, {"a": both})[0].reason == "staff override + late policy"
    refiled = graded("a", 9, "s2", "f", {"x::t": 5})
    assert changes.compare({"a": late_old}, {"a": replace(refiled, row=replace(refiled.row, late_rule="later"))}
                           )[0].reason == "file changed + late policy"


def test_a_formula_like_id_reads_back_as_it_was_and_long_lists_are_cut_on_screen(tmp_path: Path) -> None:
    many = {f"x::t{i}": 0.0 for i in range(8)}
    found = changes.compare({"=cmd": graded("=cmd", 0, "s", "f", many)},
                            {"=cmd": graded("=cmd", 8, "t", "f", {k: 1.0 for k in many})})
    changes.write_csv(found, tmp_path / "changes.csv")
    [row] = changes.read_csv(tmp_path / "changes.csv") or []
    assert row["student"] == "=cmd" and row["checks"].count("→") == 8  # the file has every check
    assert found[0].line().endswith("x::t4: 0→1; and 3 more checks (changes.csv lists them all)")
    assert changes.read_csv(tmp_path / "none.csv") is None
