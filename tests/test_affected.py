"""``pytest --affected-by NAME`` (tests/affected.py): the tests an exercise can change, read from the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.config import load_config
from tests import affected
from tests.corpus_cases import REFERENCE, corpus

CONFIG = load_config()
EXERCISES = frozenset(ex.name for aid in CONFIG.assignments for ex in CONFIG.assignment(aid).exercises)
ASSIGNMENTS = frozenset(CONFIG.assignments)
CASES = [c for kind in ("mutants", "alternatives", "hostile", "placeholders") for c in corpus(kind)]


def _calls(assignment: str) -> dict[str, set[str]]:
    """Which top-level definitions each one names, read from the reference's syntax (not the module)."""
    tree = ast.parse(REFERENCE[assignment].read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return {name: {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in defs} - {name}
            for name, node in defs.items()}


def _assignment_of(name: str) -> str:
    return next(aid for aid in CONFIG.assignments if name in {ex.name for ex in CONFIG.assignment(aid).exercises})


def _item(module: str, **params: object) -> SimpleNamespace:
    callspec = SimpleNamespace(params=params) if params else None
    return SimpleNamespace(path=Path(f"tests/{module}.py"), callspec=callspec)


@pytest.mark.parametrize("assignment, name", sorted((a, ex.name) for a in REFERENCE
                                                    for ex in CONFIG.assignment(a).exercises))
def test_an_exercise_reaches_what_it_calls_and_what_calls_it(assignment, name):
    calls = _calls(assignment)
    reached = affected.reach(name)
    assert name in reached
    assert calls[name] <= reached, f"`{name}` calls {sorted(calls[name] - reached)}, not reached"
    callers = {other for other, called in calls.items() if name in called}
    assert callers <= reached, f"{sorted(callers - reached)} call `{name}`, not reached"
    unlinked = {other for other in calls if not _linked(calls, name, other)}
    assert not unlinked & reached, f"{sorted(unlinked & reached)} neither call nor are called by `{name}`"


def _linked(calls: dict[str, set[str]], a: str, b: str) -> bool:
    """Whether ``a`` reaches ``b`` or ``b`` reaches ``a`` through calls."""
    def closure(x: str) -> set[str]:
        seen, todo = {x}, [x]
        while todo:
            for y in calls[todo.pop()] - seen:
                seen.add(y)
                todo.append(y)
        return seen
    return b in closure(a) or a in closure(b)


def test_an_exercise_calling_nothing_and_called_by_nothing_reaches_only_itself():
    calls = _calls("attention")
    alone = [n for n in calls if not calls[n] and not any(n in c for c in calls.values()) and n in EXERCISES]
    for name in alone:
        assert affected.reach(name) == {name}


def test_softmax_reaches_its_callers_and_not_the_mean_of_the_past():
    reached = affected.reach("softmax")
    assert {"attention", "multi_head_attention"} <= reached
    assert "bag_of_past" not in reached


def test_a_name_no_reference_defines_is_a_usage_error():
    with pytest.raises(pytest.UsageError, match="no reference in solutions/ defines `no_such_exercise`"):
        affected.reach("no_such_exercise")


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_a_corpus_case_is_kept_exactly_when_it_defines_or_is_about_an_affected_exercise(name):
    reached = affected.reach(name)
    for case in CASES:
        about = (affected.defined_names(case.path.read_bytes()) | {case.header.get("exercise", "")}
                 | set(re.findall(r"\w+", case.header.get("failing_only", ""))))
        want = not (about & EXERCISES) or bool(about & reached)
        assert affected.keep(_item("test_corpus", case=case), reached, EXERCISES) == want, case.id


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_ids_and_pairs_naming_an_exercise_are_kept_only_for_affected_ones(name):
    reached = affected.reach(name)
    for other in sorted(EXERCISES):
        member = _item("test_returns", member=f"{_assignment_of(other)}/{other}/list")
        assert affected.keep(member, reached, EXERCISES, ASSIGNMENTS) == (other in reached)
        assert affected.keep(_item("test_gate_family", pair=(_assignment_of(other), other)), reached, EXERCISES, ASSIGNMENTS) == (other in reached)
        assert affected.keep(_item("test_nonfinite", exercise=other), reached, EXERCISES) == (other in reached)
        by_name = _item("test_gate_family", assignment=_assignment_of(other), exercise=other)
        assert affected.keep(by_name, reached, EXERCISES, ASSIGNMENTS) == (other in reached)


def test_a_test_about_no_exercise_is_kept_in_the_modules_that_read_the_config_and_dropped_elsewhere():
    reached = affected.reach("softmax")
    for module in sorted(affected.WHOLE_CONFIG):
        assert affected.keep(_item(module), reached, EXERCISES)
        assert affected.keep(_item(module, dtype="float16"), reached, EXERCISES)
        for aid in sorted(ASSIGNMENTS):  # the assignment `attention` is not the exercise `attention`
            assert affected.keep(_item(module, assignment=aid), reached, EXERCISES, ASSIGNMENTS)
    for module in ("test_sandbox_limits", "test_batch", "test_export_formats", "test_links"):
        assert not affected.keep(_item(module), reached, EXERCISES)


def test_a_case_deleting_a_callee_is_kept_for_the_callees_callers():
    """``missing_softmax`` defines no ``softmax`` at all (``failing_only: softmax``): a new exercise that calls
    ``softmax`` must run it, since the new exercise's checks now fail too."""
    deleting = [c for c in CASES if c.header.get("failing_only") and c.header["failing_only"] not in
                affected.defined_names(c.path.read_bytes())]
    assert deleting
    for case in deleting:
        for name in sorted(EXERCISES):
            reached = affected.reach(name)
            if case.header["failing_only"] in reached:
                assert affected.keep(_item("test_hostile", case=case), reached, EXERCISES), (case.id, name)


def test_a_file_that_does_not_parse_still_names_what_it_defines():
    assert affected.defined_names(b"def softmax(scores, dim=-1)\n    return scores\nclass Head:\n") == {"softmax", "Head"}
    assert affected.defined_names(b"def softmax(scores, dim=-1):\n    return scores\n") == {"softmax"}
