"""The final card (``grader.batch.final``): overrides and the late policy in one stage, exact points, the
audit and changes.csv when an override stops applying, and the batch modules' imports without a circle.

Everything here is pure or works on small hand-made cards in a temporary folder: nothing is graded."""

from __future__ import annotations

import ast
import csv
import dataclasses
import io
import json
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from grader import scorecard
from grader.batch import apply_overrides, changes, final, intake, overrides, run
from grader.batch.layout import Layout
from grader.batch.progress import Progress
from grader.deadlines import Penalty, Policy
from grader.export.gradebook import Row
from tests.conftest import ROOT

SHA = "a" * 64
FP = "f" * 64
DUE = datetime(2026, 3, 1, 23, 59, tzinfo=timezone.utc)


def card(scores: list[float], tops: list[float], sha: str = SHA, late: dict | None = None) -> scorecard.Scorecard:
    """One exercise, ``softmax``, with a check per score (passed when it has its points)."""
    checks = tuple(scorecard.CheckResult(f"test_{i}", "softmax", "passed" if s == t and t else "failed", s, t, "",
                                         "visible") for i, (s, t) in enumerate(zip(scores, tops)))
    return scorecard.Scorecard("attention", scorecard.SubmissionInfo("attention.py", sha),
                               float(sum(Decimal(str(s)) for s in scores)),
                               float(sum(Decimal(str(t)) for t in tops)), checks, late=late)


def entry(points: float, check: str | None = None, sha: str = SHA) -> overrides.OverrideEntry:
    return overrides.OverrideEntry("bob", "softmax", check, points, "office hours", "prof", "2026-03-02T10:00:00Z",
                                   sha, FP)


FINGERPRINTS = {"softmax": FP, **{f"softmax/test_{i}": FP for i in range(8)}}


# ------------------------------------------------------------------ exact points (issue 26, item 2)


def test_an_exercise_override_stores_the_points_given_exactly() -> None:
    """A 0-point check last (GPU parity skipped and dropped) used to take the rounding: 2 became 2.000001."""
    new, applied, _ = apply_overrides.apply(card([0, 0, 0, 0], [1, 1, 1, 0]), [entry(2)], FINGERPRINTS)
    assert applied and new.score == 2.0 and repr(new.score) == "2.0"
    assert sum(Decimal(repr(c.score)) for c in new.checks) == Decimal(2)
    assert all(0 <= c.score <= c.max_score for c in new.checks)
    big = card([0] * 8, [2, 0.5, 0.5, 1, 1, 0.5, 1, 0])  # attention_scores's checks, CUDA parity dropped
    new, _, _ = apply_overrides.apply(big, [entry(5)], FINGERPRINTS)
    assert new.score == 5.0 and sum(Decimal(repr(c.score)) for c in new.checks) == Decimal(5)


def test_an_exercise_override_never_lowers_a_check_the_student_passed() -> None:
    """Raising the exercise's total fills what the student missed; what they passed keeps its points."""
    passed = card([0, 1, 0, 0.5, 0], [2, 1, 1, 0.5, 0])
    new, _, _ = apply_overrides.apply(passed, [entry(3)], FINGERPRINTS)
    scores = [c.score for c in new.checks]
    assert scores[1] == 1 and scores[3] == 0.5  # passed: kept (the old spread gave test_1 0.666667)
    assert new.score == 3.0 and scores == [1.0, 1.0, 0.5, 0.5, 0.0]  # the 1.5 missing, in proportion 2 : 1
    assert next(c for c in new.checks if c.id == "test_1").override.was == 1


def test_a_deduction_comes_off_in_proportion_to_what_was_earned() -> None:
    new, _, _ = apply_overrides.apply(card([2, 1, 0], [2, 1, 1]), [entry(1.5)], FINGERPRINTS)
    assert [c.score for c in new.checks] == [1.0, 0.5, 0.0] and new.score == 1.5


def test_spread_is_whole_micro_points_and_within_each_top() -> None:
    thirds = [Decimal("0.333333")] * 3
    shares = apply_overrides.spread(Decimal("0.5"), [Decimal(0)] * 3, thirds)
    assert sum(shares) == Decimal("0.5") and all(0 <= s <= t for s, t in zip(shares, thirds))
    assert all(s == s.quantize(apply_overrides.MICRO) for s in shares)


# ------------------------------------------------------------------ one stage: overrides, then the late policy


def late_rules(entries: list[overrides.OverrideEntry]) -> final.Rules:
    policy = Policy(DUE, "UTC", 0, Penalty("hour", 10, 50))
    return final.Rules(final.group(entries), FINGERPRINTS,
                       final.LateInputs(policy, {"bob": "2026-03-02T01:30:00+00:00"}))


def test_finish_applies_the_override_then_the_late_policy_to_its_total() -> None:
    done = final.finish(card([0, 0], [3, 1]), "bob", "", late_rules([entry(2, "test_0")]))
    assert done.card.score == 2 and done.card.late["raw_score"] == 2  # the raw score is after the override
    assert done.card.late["penalty_percent"] == 20 and done.card.final_score == 1.6
    again = final.finish(done.card, "bob", "", late_rules([entry(2, "test_0")]))
    assert again.card == done.card and not again.events  # final twice: the same card, nothing logged twice
    row = final.final_row(Row("bob", "graded", "bob.py", card="cards/bob.json", submitted_at="x"), done.card)
    assert (row.score, row.raw_score, row.penalty, row.submitted_at) == (1.6, 2, 0.4, "x")


def test_the_progress_line_shows_the_final_score(tmp_path: Path) -> None:
    """What grade-all prints as each card arrives is the final card's score, overrides and penalty in."""
    layout = Layout(tmp_path / "out")
    layout.prepare()
    stage = final.Stage(layout, late_rules([entry(2, "test_0")]))
    handin = intake.Handin("bob", tmp_path / "bob.py", "bob.py", "")
    row = run.result_row("card", ("bob", card([0, 0], [3, 1]).to_json(), False), handin, SHA, layout, None, stage)
    stream = io.StringIO()
    progress = Progress(stream, bar=False)
    progress.start(1, 0)
    progress.advance(row)
    assert "[1/1] bob: 1.6/4" in stream.getvalue()
    on_disk = scorecard.Scorecard.from_dict(json.loads(layout.card("bob").read_text()))
    assert on_disk.final_score == 1.6 and on_disk.score == 2  # written once, already final


def test_a_card_nothing_changed_is_written_as_the_grader_process_sent_it(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """No override and no late policy: the text the grader process sent is the file, not serialised
    again; once the stage changes the card, the file is the final card's own text."""
    layout = Layout(tmp_path / "out")
    layout.prepare()
    handin = intake.Handin("bob", tmp_path / "bob.py", "bob.py", "")
    graded = card([1, 0], [1, 1])
    text = scorecard.to_valid_json(graded)
    real_write = scorecard.write
    monkeypatch.setattr(scorecard, "write", lambda *_: pytest.fail("serialised again"))
    row = run.result_row("card", ("bob", text, False), handin, SHA, layout, None, final.Stage(layout, final.Rules()))
    assert layout.card("bob").read_text() == text and row.score == 1
    monkeypatch.setattr(scorecard, "write", real_write)
    stage = final.Stage(layout, late_rules([]))
    row = run.result_row("card", ("bob", text, False), handin, SHA, layout, None, stage)
    written = layout.card("bob").read_text()
    on_disk = scorecard.Scorecard.from_dict(json.loads(written))
    assert written == scorecard.to_valid_json(on_disk) != text
    assert on_disk.late["penalty_percent"] == 20 and row.score == on_disk.final_score == 0.8
    # An entry that does not apply (the submission changed) still rebuilds the scores: an int 1 becomes
    # 1.0, an equal card written differently, so the file is the final card's text, not the grader's.
    whole = dataclasses.replace(graded, score=1, max_score=2)
    text = scorecard.to_valid_json(whole)
    stage = final.Stage(layout, final.Rules(final.group([entry(1, "test_1", sha="b" * 64)]), FINGERPRINTS))
    run.result_row("card", ("bob", text, False), handin, SHA, layout, None, stage)
    written = layout.card("bob").read_text()
    assert '"score": 1.0,' in written and written == scorecard.to_valid_json(scorecard.Scorecard.from_dict(
        json.loads(written))) != text


# ------------------------------------------------------------------ an override that stops applying


def test_an_override_that_stops_applying_is_in_the_audit_and_in_changes(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "out")
    layout.prepare()
    rules = final.Rules(final.group([entry(2, "test_0")]), FINGERPRINTS)
    first = final.Stage(layout, rules)
    before = first.fresh(Row("bob", "graded", "bob.py", card="cards/bob.json"), card([0, 0], [3, 1]), None)
    assert before.score == 2
    previous = layout.read_card("bob")
    second = final.Stage(layout, rules)  # the student handed in another file: the entry is pinned to the old one
    after = second.fresh(Row("bob", "graded", "bob.py", card="cards/bob.json"), card([0, 0], [3, 1], "b" * 64),
                         previous)
    second.close()
    assert after.score == 0
    why = "override no longer applies: the submission changed (softmax/test_0)"
    lines = [json.loads(line) for line in (layout.root / overrides.AUDIT).read_text().splitlines()]
    assert [(a["event"], a["old"], a["new"]) for a in lines] == [("applied", 0, 2), ("stopped", 2, 0)]
    assert lines[1]["why"] == why and lines[1]["target"] == "softmax/test_0"
    assert second.stopped == {"bob": (why,)}
    old = changes.Standing(before, f"{SHA}:x")
    new = changes.Standing(after, f"{'b' * 64}:x")
    [change] = changes.compare({"bob": old}, {"bob": new}, second.stopped)
    assert change.reason == f"{changes.FILE_CHANGED}; {why}"
    text = changes.csv_text([change])
    assert list(csv.DictReader(io.StringIO(text)))[0]["reason"] == f"file changed; {why}"
    assert (layout.root / overrides.REVIEW).is_file()


# ------------------------------------------------------------------ the batch's own shape (issue 26, item 8)


def import_graph() -> dict[str, set[str]]:
    """``grader/batch``'s modules and the batch modules each imports (any import, TYPE_CHECKING's too)."""
    folder = ROOT / "grader" / "batch"
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "grader.batch":
                found |= {a.name if a.name in names else "__init__" for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grader.batch."):
                found.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("grader.batch.")}
        graph[path.stem] = found - {path.stem}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_batch_modules_import_each_other_without_a_circle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle in grader/batch: " + " -> ".join(cycle or [])


def test_the_cycle_finder_names_a_circle() -> None:
    assert find_cycle({"run": {"late"}, "late": {"reports"}, "reports": {"run"}}) == ["late", "reports", "run", "late"]


def test_grade_all_and_merge_make_cards_final_through_the_one_stage() -> None:
    graph = import_graph()
    assert "final" in graph["run"] and "final" in graph["merge"]
    assert not {"apply_overrides", "reports"} & (graph["run"] | graph["merge"] | graph["outputs"])
