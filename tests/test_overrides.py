"""Staff overrides (``grader override``, ``grader.batch.overrides``): added with a reason, applied by every
grade-all and merge, kept through re-grades, sent back for review when the submission or the check changed.

One tiny class graded once (alice: the reference, bob: the stub); each test works on its own copy, but for
the two that read one shared re-grade with bob's overrides (``overridden``).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from grader import batch, cli
from grader.batch import apply_overrides, final, overrides
from grader.export.gradebook import row_from_card
from grader.config import load_config
from grader.export import html, text
from grader.scorecard import Scorecard
from tests.conftest import ROOT

ASSIGNMENT = load_config().assignment("attention")
CHECK = "test_output_matches_reference[attention_scores]"
REASON = "solved in the notebook; the upload lost a line"


def grade_all(submissions: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(submissions), "--assignment",
                           "attention", "--out", str(out), "--jobs", "1", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("overrides")
    subs = root / "submissions"
    subs.mkdir()
    shutil.copy(ROOT / "solutions/attention.py", subs / "alice.py")
    shutil.copy(ROOT / "exercises/attention.py", subs / "bob.py")
    proc = grade_all(subs, root / "out")
    assert proc.returncode == 0, proc.stderr
    return subs, root / "out"


@pytest.fixture
def course(graded: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the class and its grade-all folder, this test's to change."""
    subs, out = graded
    shutil.copytree(subs, tmp_path / "submissions")
    shutil.copytree(out, tmp_path / "out")
    return tmp_path / "submissions", tmp_path / "out"


def override(course: Path, *args: str) -> int:
    try:
        return cli.main(["override", *args, "--course", str(course)])
    except SystemExit as exc:  # argparse's own refusals
        return int(exc.code or 0)


def card(out: Path, student: str) -> Scorecard:
    return Scorecard.from_dict(json.loads((out / "cards" / f"{student}.json").read_text()))


def score_of(c: Scorecard, check: str) -> float:
    return next(x.score for x in c.checks if x.id == check)


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def audit(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / overrides.AUDIT).read_text().splitlines()]


# ------------------------------------------------------------------ the command


def test_the_command_appends_a_pinned_entry_and_an_audit_line(course: tuple[Path, Path], capsys) -> None:
    _, out = course
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "TA Kim") == 0
    [entry] = overrides.load(out / overrides.OVERRIDES)
    assert (entry.student, entry.exercise, entry.check, entry.points, entry.reason, entry.by) == (
        "bob", "attention_scores", CHECK, 2.0, REASON, "TA Kim")
    assert entry.sha256 == card(out, "bob").submission.sha256
    fingerprints = overrides.check_fingerprints(ASSIGNMENT)
    assert entry.fingerprint == fingerprints["attention_scores/test_output_matches_reference"]
    assert entry.at.endswith("Z")
    [line] = audit(out)
    assert (line["event"], line["student"], line["by"], line["old"], line["new"]) == (
        "added", "bob", "TA Kim", 0.0, 2.0)
    assert "0 -> 2" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--check", CHECK, "--points", "2", "--by", "ta"], "required: --reason"),
    (["--check", CHECK, "--points", "2", "--reason", "  ", "--by", "ta"], "--reason must not be empty"),
    (["--check", "test_no_such_check", "--points", "1", "--reason", "r", "--by", "ta"], "unknown check"),
    (["--check", CHECK, "--points", "2.5", "--reason", "r", "--by", "ta"], "outside 0..2"),
    (["--exercise", "nope", "--points", "1", "--reason", "r", "--by", "ta"], "unknown exercise"),
    # as many checks as exercises list it: counted from the config, so a new exercise changes no test here
    (["--check", "test_output_matches_reference", "--points", "1", "--reason", "r", "--by", "ta"],
     f"names {len(ASSIGNMENT.exercises_with('test_output_matches_reference'))} checks"),
])
def test_a_bad_override_is_one_line_and_exit_2(course: tuple[Path, Path], capsys, args: list[str],
                                               message: str) -> None:
    _, out = course
    assert override(out, "bob", *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (out / overrides.OVERRIDES).exists() and not (out / overrides.AUDIT).exists()


def test_a_bad_line_in_the_file_is_named(course: tuple[Path, Path], capsys) -> None:
    subs, out = course
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "ta") == 0
    good = (out / overrides.OVERRIDES).read_text()
    (out / overrides.OVERRIDES).write_text(good + "{not json\n")
    assert override(out, "bob", "--check", CHECK, "--points", "1", "--reason", "r", "--by", "ta") == 2
    err = capsys.readouterr().err
    assert f"{overrides.OVERRIDES}:2: not JSON" in err and err.count("\n") == 1
    entry = json.loads(good)
    del entry["reason"]
    (out / overrides.OVERRIDES).write_text(good + json.dumps(entry) + "\n")
    with pytest.raises(overrides.OverridesError, match=r"overrides.jsonl:2: .*reason"):
        overrides.load(out / overrides.OVERRIDES)
    proc = grade_all(subs, out)  # grade-all refuses before grading, in one line
    assert proc.returncode == 2 and "overrides.jsonl:2:" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ grade-all, re-grades, review


@pytest.fixture(scope="module")
def overridden(graded: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the class with two overrides on bob (a check, and an exercise's total), then grade-all
    again: nothing to grade, the overrides applied. Read only: the tests of what grade-all applies and
    what the student sees share this one run; a test that runs grade-all again works on a copy."""
    subs, out = graded
    root = tmp_path_factory.mktemp("overridden")
    shutil.copytree(subs, root / "submissions")
    shutil.copytree(out, root / "out")
    subs, out = root / "submissions", root / "out"
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "TA Kim") == 0
    assert override(out, "bob", "--exercise", "scale_scores", "--points", "3", "--reason", "office hours",
                    "--by", "prof") == 0
    proc = grade_all(subs, out)
    assert proc.returncode == 0, proc.stderr
    return subs, out


def test_grade_all_applies_it_and_a_regrade_keeps_it(overridden: tuple[Path, Path], tmp_path: Path) -> None:
    def applied_to_bob(out: Path) -> None:
        bob = card(out, "bob")
        assert score_of(bob, CHECK) == 2 and bob.score == 5
        assert next(c for c in bob.checks if c.id == CHECK).override.reason == REASON
        spread = [c for c in bob.checks if c.exercise == "scale_scores"]
        assert round(sum(c.score for c in spread), 6) == 3 and all(c.score <= c.max_score for c in spread)
        row = gradebook(out)["bob"]
        assert (float(row["score"]), float(row["attention_scores"]), float(row["scale_scores"])) == (5, 2, 3)
        assert batch.read_record(batch.Layout(out), "bob")[0].score == 5  # canvas from the folder reads records
        assert not (out / overrides.REVIEW).exists()

    applied_to_bob(overridden[1])  # unchanged: nothing graded
    subs, out = tmp_path / "submissions", tmp_path / "out"
    shutil.copytree(overridden[0], subs)
    shutil.copytree(overridden[1], out)
    proc = grade_all(subs, out, "--force")  # then every card graded again
    assert proc.returncode == 0, proc.stderr
    applied_to_bob(out)
    applied = [line for line in audit(out) if line["event"] == "applied"]
    assert [(a["target"], a["old"], a["new"]) for a in applied] == [
        (f"attention_scores/{CHECK}", 0.0, 2.0), ("scale_scores", 0.0, 3.0)] * 2  # first run, and the --force one


def test_a_changed_submission_is_listed_for_review_not_applied(course: tuple[Path, Path]) -> None:
    subs, out = course
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "ta") == 0
    assert grade_all(subs, out).returncode == 0 and card(out, "bob").score == 2  # applied
    (subs / "bob.py").write_text((subs / "bob.py").read_text() + "\n# changed after the override\n")
    proc = grade_all(subs, out)
    assert proc.returncode == 0, proc.stderr
    assert score_of(card(out, "bob"), CHECK) == 0 and card(out, "bob").score == 0
    assert "override not applied, review it: bob" in proc.stderr and "submission changed" in proc.stderr
    with (out / overrides.REVIEW).open(newline="") as f:
        [review] = list(csv.DictReader(f))
    assert (review["student"], review["target"], review["points"]) == ("bob", f"attention_scores/{CHECK}", "2")
    assert "submission changed" in review["why"]
    # the override stopped applying: the audit and changes.csv say so, not only "file changed"
    why = f"override no longer applies: the submission changed (attention_scores/{CHECK})"
    [stopped] = [line for line in audit(out) if line["event"] == "stopped"]
    assert (stopped["student"], stopped["old"], stopped["new"], stopped["why"]) == ("bob", 2.0, 0.0, why)
    with (out / "changes.csv").open(newline="") as f:
        [change] = list(csv.DictReader(f))
    assert (change["student"], change["delta"], change["reason"]) == ("bob", "-2", f"file changed; {why}")


def test_a_changed_check_is_listed_for_review(course: tuple[Path, Path]) -> None:
    _, out = course
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "ta") == 0
    entries = overrides.load(out / overrides.OVERRIDES)
    fps = overrides.check_fingerprints(ASSIGNMENT)
    new, applied, review = apply_overrides.apply(card(out, "bob"), entries, fps)
    assert applied == entries and not review and new.score == 2
    first = ASSIGNMENT.exercises[0]
    repointed = replace(first, checks=tuple(replace(c, points=3) if c.name == "test_output_matches_reference" else c
                                            for c in first.checks))
    changed = overrides.check_fingerprints(replace(ASSIGNMENT, exercises=(repointed, *ASSIGNMENT.exercises[1:])))
    again, applied, [r] = apply_overrides.apply(new, entries, changed)
    assert not applied and "changed since the override" in r.why
    assert again == card(out, "bob")  # the override taken off: the graded card
    # the folder way, as grade-all and merge do it (the final-card stage): the review file lists it
    stage = final.Stage(batch.Layout(out), final.Rules(final.group(entries), changed))
    row = stage.kept(batch.read_record(batch.Layout(out), "bob")[0])
    stage.close()
    assert [r.entry for r in stage.reviews] == entries and row.score == 0
    assert "bob" in (out / overrides.REVIEW).read_text()


def test_merge_applies_the_overrides_of_its_shards(course: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = course
    assert override(out, "bob", "--check", CHECK, "--points", "2", "--reason", REASON, "--by", "ta") == 0
    assert cli.main(["merge", str(out), "--out", str(tmp_path / "merged")]) == 0
    assert card(tmp_path / "merged", "bob").score == 2 and float(gradebook(tmp_path / "merged")["bob"]["score"]) == 2
    assert (tmp_path / "merged" / overrides.OVERRIDES).read_text() == (out / overrides.OVERRIDES).read_text()


def test_merge_keeps_the_late_penalty_on_an_overridden_card_and_redraws_reports(course: tuple[Path, Path],
                                                                               tmp_path: Path) -> None:
    """A shard's late policy (20% off alice) applied again on her overridden raw score; every report follows."""
    from dataclasses import replace as with_

    from grader import scorecard
    from grader.export import pytest_json

    _, out = course
    layout = batch.Layout(out)
    alice = card(out, "alice")
    late = {"status": "late", "policy": "due 2026-03-01 23:59 UTC; -5% per started hour late, at most 50%",
            "rule": "submitted 2026-03-02 03:19 UTC: 3h20min late = 4 started hours x 5% = -20%",
            "lateness_hours": 3.33, "raw_score": alice.score, "penalty_percent": 20.0,
            "penalty_points": round(alice.score * 0.2, 6), "final_score": round(alice.score * 0.8, 6)}
    (out / "cards" / "alice.json").write_text(scorecard.to_valid_json(with_(alice, late=late)))
    row, key = batch.read_record(layout, "alice")
    batch.write_record(layout, row_from_card("alice", with_(alice, late=late), row.file, row.card), key)
    pytest_json.write(card(out, "alice"), layout.pytest_report("alice"), view="instructor")
    points = next(c.max_score for c in alice.checks if c.id == CHECK)
    assert override(out, "alice", "--check", CHECK, "--points", "0", "--reason", "copied", "--by", "prof") == 0
    merged = tmp_path / "merged"
    assert cli.main(["merge", str(out), "--out", str(merged)]) == 0
    raw = alice.score - points
    row = gradebook(merged)["alice"]
    assert (float(row["raw_score"]), float(row["score"])) == (pytest.approx(raw), pytest.approx(raw * 0.8))
    assert "4 started hours" in row["late_rule"]
    got = card(merged, "alice")
    assert got.score == pytest.approx(raw) and got.final_score == pytest.approx(raw * 0.8)
    report = json.loads((merged / "reports" / "alice.report.json").read_text())
    assert report["environment"]["grader_view"] == "instructor"  # drawn again, in the view it had
    assert "copied" in json.dumps(report)


# ------------------------------------------------------------------ what the student sees


def test_the_card_and_reports_show_the_override_and_its_reason(overridden: tuple[Path, Path]) -> None:
    _, out = overridden
    data = json.loads((out / "cards" / "bob.json").read_text())
    check = next(c for c in data["checks"] if c["id"] == CHECK)
    assert check["override"] == {"points": 2.0, "was": 0.0, "reason": REASON, "by": "TA Kim",
                                 "at": check["override"]["at"], "scope": "check"}
    table = text.render(card(out, "bob"), width=200, show_passed=False)
    assert f"OVERRIDE 0 -> 2 by TA Kim: {REASON}" in table
    assert table.count("OVERRIDE exercise total 0 -> 3 by prof: office hours") == 1
    page = html.render(card(out, "bob"))
    assert 'id="overrides"' in page and REASON in page and "office hours" in page
    assert 'id="overrides"' not in html.render(card(out, "alice"))


def test_applying_is_pure_and_idempotent(graded: tuple[Path, Path]) -> None:
    """Applying to an overridden card again gives the same card; an entry for another target leaves others."""
    _, out = graded
    bob = card(out, "bob")
    entry = overrides.OverrideEntry("bob", "attention_scores", CHECK, 1.5, "r", "ta", "2026-01-01T00:00:00Z",
                            bob.submission.sha256, overrides.check_fingerprints(ASSIGNMENT)[
                                "attention_scores/test_output_matches_reference"])
    once, applied, review = apply_overrides.apply(bob, [entry], overrides.check_fingerprints(ASSIGNMENT))
    twice, _, _ = apply_overrides.apply(once, [entry], overrides.check_fingerprints(ASSIGNMENT))
    assert once == twice and once.score == bob.score + 1.5 and applied == [entry] and not review
    assert apply_overrides.graded(once) == bob
    assert apply_overrides.apply(once, [], None)[0] == bob  # no entry: back to the graded card
