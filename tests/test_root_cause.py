"""The root cause leads, and suspects are only the functions whose own code the checks point at (issue 38, item 7).

A student whose `attention_scores` used `k.T` read in the gradebook "multi_head_attention: 0/14.5 ... raised
RuntimeError", and a wrong causal mask got "The checks that failed point at the causal mask...; the order inside
attention...; multi_head_attention itself...". The call graph comes from the reference's source
(``grader.calls``), the order from ``assignments.yaml`` (held to call order by the completeness check); every
(callee, caller) pair of every assignment is a case.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from grader import calls
from grader.authoring.completeness import missing
from grader.config import DEFAULT_CONFIG, load_config
from grader.export.gradebook import exercise_zeros, row_from_card
from grader.export.html import ENTROPY_CAUSES, entropy_hint
from grader.scorecard import CheckResult, Scorecard, SubmissionInfo
from tests.test_authoring import _copy

CONFIG = load_config(DEFAULT_CONFIG)


def _graphs() -> dict[str, dict[str, frozenset[str]]]:
    return {a.id: calls.of_reference(a.reference, [ex.name for ex in a.exercises]) for a in CONFIG.assignments.values()}


def _pairs() -> list[tuple[str, str, str]]:
    """(assignment, callee, caller) for every exercise that calls another."""
    return [(a, callee, caller) for a, graph in _graphs().items() for caller, callees in graph.items()
            for callee in sorted(callees)]


def test_the_graph_is_read_from_the_reference_and_holds_the_lessons_calls():
    graphs = _graphs()
    assert graphs["attention"]["multi_head_attention"] >= {"attention", "causal_mask", "split_heads", "merge_heads"}
    assert graphs["attention"]["attention"] >= {"attention_scores", "causal_mask", "softmax"}
    assert graphs["attention"]["causal_mask"] == frozenset()
    assert graphs["attention-modules"]["MultiHeadAttention"] == {"SelfAttentionHead"}
    assert len(_pairs()) >= 10


def _card(assignment: str, lost: dict[str, float]) -> Scorecard:
    """A card in the config's order, two 2-point checks per exercise; ``lost``: points lost per exercise."""
    checks = []
    for ex in CONFIG.assignments[assignment].exercises:
        left = lost.get(ex.name, 0.0)
        for i in range(2):
            take = min(2.0, left)
            left -= take
            status = "failed" if take else "passed"
            checks.append(CheckResult(f"test_{ex.name}_{i}", ex.name, status, 2.0 - take, 2.0,
                                      f"{ex.name} check {i} failed" if take else "", "visible"))
    return Scorecard(assignment, SubmissionInfo("x.py", "0" * 64), sum(c.score for c in checks),
                     sum(c.max_score for c in checks), tuple(checks))


@pytest.mark.parametrize("assignment, callee, caller", _pairs())
def test_the_gradebook_leads_with_the_first_exercise_to_lose_points(assignment, callee, caller):
    card = _card(assignment, {callee: 1.0, caller: 4.0})  # the callee partly wrong, the caller at 0 through it
    message = row_from_card("amy", card, "x.py", "cards/amy.json").message
    assert message.startswith(f"{callee}: 3/4, the first exercise in call order to lose points: ")
    assert message.index(callee) < message.index(f"{caller}: 0/4")
    at_zero = _card(assignment, {callee: 4.0, caller: 4.0})  # both at 0: the callee first, said once
    assert exercise_zeros(at_zero).startswith(f"{callee}: 0/4") and "first exercise" not in exercise_zeros(at_zero)


def test_no_exercise_at_zero_still_leaves_the_message_empty():
    assert exercise_zeros(_card("attention", {"attention_scores": 1.0, "attention": 1.0})) == ""


@pytest.mark.parametrize("assignment, callee, caller", _pairs())
def test_a_suspect_is_only_a_failing_exercise_that_calls_no_failing_one(assignment, callee, caller):
    graph = _graphs()[assignment]
    callers_too = {callee, caller} | {c for c, cs in graph.items() if callee in cs}
    assert calls.suspects(callers_too, graph) == {callee}


@pytest.mark.parametrize("a, b", [(a, b) for a, b in itertools.combinations(_graphs()["attention"], 2)
                                  if a not in _graphs()["attention"][b] and b not in _graphs()["attention"][a]])
def test_two_independent_failures_are_both_suspects(a, b):
    assert calls.suspects({a, b}, _graphs()["attention"]) == {a, b}


@pytest.mark.parametrize("root", [name for name, _ in ENTROPY_CAUSES])
def test_the_entropy_hint_names_the_root_and_not_those_that_call_it(root):
    graph = _graphs()["attention"]
    failed = {root} | {c for c, cs in graph.items() if root in cs}
    hint = entropy_hint(calls.suspects(failed, graph))
    named = [exercise for exercise, text in ENTROPY_CAUSES if text in hint]
    assert named == [root], hint


def test_an_unreadable_reference_makes_every_failure_its_own_suspect(tmp_path: Path):
    broken = tmp_path / "ref.py"
    broken.write_text("def attention(:\n")
    assert calls.of_reference(broken, ["attention"]) == {} and calls.of_reference(None, ["attention"]) == {}
    assert calls.suspects({"attention", "causal_mask"}, {}) == {"attention", "causal_mask"}


def test_a_config_that_lists_a_caller_before_its_callee_is_incomplete(tmp_path: Path):
    copy = _copy(tmp_path / "course")
    config = copy / "assignments.yaml"
    text = config.read_text()
    start = text.index("      causal_mask:\n")
    end = text.index("      apply_mask:\n")
    block = text[start:end]
    moved = text[:start] + text[end:]
    at = moved.index("      attention_entropy:\n")
    config.write_text(moved[:at] + block + moved[at:])  # causal_mask now after its callers
    said = [m for m in missing(copy) if m.what.startswith("list ")]
    assert {m.exercise for m in said} == {"attention", "multi_head_attention"}
    assert all("causal_mask" in m.what and m.file == "assignments.yaml" for m in said)


@pytest.mark.parametrize("root", ["causal_mask", "softmax", "split_heads", "attention"])
def test_the_report_page_names_only_the_root_as_a_suspect(root):
    """The page itself, as a student reads it: a wrong `root` fails its callers too, and only `root` is named."""
    import dataclasses
    import re

    from grader.export import html
    graph = _graphs()["attention"]
    failed = {root} | {c for c, cs in graph.items() if root in cs}
    card = _card("attention", {name: 1.0 for name in failed})
    card = dataclasses.replace(card, figures={"head_entropy": {"student": [0.2, 0.9, 1.1], "reference": [0.5, 0.6, 0.7],
                                                               "uniform": 1.0}})
    page = " ".join(re.sub(r"<[^>]+>", " ", html.render(card)).split())
    hint = page[page.index("The checks that failed point at"):]
    hint = hint[: hint.index(".", hint.index("point at") + 40) + 1]
    texts = dict(ENTROPY_CAUSES)
    plain = {name: " ".join(re.sub(r"<[^>]+>", " ", str(html.prose(text))).split()) for name, text in texts.items()}
    assert plain[root][:30] in hint, hint
    for other in failed - {root}:
        if other in plain:
            assert plain[other][:30] not in hint, hint
