"""Scoring fails closed: points only from a recorded pass."""

from __future__ import annotations

import dataclasses
import json

import pytest

from grader.session import ChecksBroken, Verdict
from grader.session.verdicts import check_verdict
from grader.config import load_config
from grader.json_text import dumps_indented
from grader.scoring import check_results
from tests.conftest import ROOT

ATTENTION = load_config(ROOT / "assignments.yaml").assignment("attention")


def outcome(test, exercise, status="passed", params=""):
    return Verdict(test, test + params, exercise, status, "" if status == "passed" else "why", 0.0)


def everything_passed():
    return [outcome(c.name, ex.name) for ex in ATTENTION.exercises for c in ex.checks]


def test_all_recorded_passes_give_full_marks():
    results = check_results(everything_passed(), ATTENTION)
    assert sum(r.score for r in results) == sum(r.max_score for r in results) == ATTENTION.max_points


def test_a_check_with_no_outcome_is_an_error_worth_nothing():
    outcomes = everything_passed()[:-1]  # the last check (the first is a 0-point gate)
    results = check_results(outcomes, ATTENTION)
    missing = [r for r in results if r.status == "error"]
    assert len(missing) == 1 and missing[0].score == 0 and missing[0].max_score > 0
    assert "did not run" in missing[0].message


def test_an_unknown_check_stops_grading():
    with pytest.raises(ChecksBroken, match="not listed"):
        check_results(everything_passed() + [outcome("test_invented", "softmax")], ATTENTION)


def test_parameters_split_a_checks_points():
    outcomes = [o for o in everything_passed() if not (o.exercise == "softmax" and o.test == "test_low_precision_inputs_work")]
    outcomes += [outcome("test_low_precision_inputs_work", "softmax", "passed", "[softmax-float16]"),
                 outcome("test_low_precision_inputs_work", "softmax", "failed", "[softmax-bfloat16]")]
    lp = [r for r in check_results(outcomes, ATTENTION) if r.id.startswith("test_low_precision_inputs_work[softmax")]
    assert sorted((r.score, r.max_score) for r in lp) == [(0.0, 0.5), (0.5, 0.5)]


@pytest.mark.parametrize("policy, expected_max", [("drop", 0.0), ("keep", 1.0)])
def test_skipped_gpu_points_follow_the_config(policy, expected_max):
    assignment = dataclasses.replace(ATTENTION, gpu_points_without_cuda=policy)
    outcomes = [o if o.test != "test_cuda_matches_cpu" else dataclasses.replace(o, status="skipped")
                for o in everything_passed()]
    gpu = [r for r in check_results(outcomes, assignment) if r.id == "test_cuda_matches_cpu"]
    assert gpu and all(r.score == 0 and r.max_score == expected_max for r in gpu)


def test_a_pass_during_which_the_worker_crashed_does_not_count():
    verdict = check_verdict(None, incident=True)
    assert verdict["status"] == "error"


def test_a_bug_in_a_check_is_an_error_not_a_pass():
    verdict = check_verdict(KeyError("oops"))
    assert verdict["status"] == "error" and "internal check error" in verdict["message"]


# ------------------------------------------------------------------ the card's JSON (grader.scorecard)


def every_field_card():
    """A card with every optional section and field set, and the free-form ones holding what JSON changes
    (tuples, a non-string key, non-ASCII text)."""
    from grader import scorecard as sc

    also = (sc.MistakeName("m2", "Another mistake"),)
    checks = (
        sc.CheckResult("test_a[float16]", "softmax", "failed", 0.0, 1.5, "wrong \u00e9 \"quoted\"\nline", "visible",
                       0.25, sc.Diagnosis("m1", "A mistake", also),
                       sc.Override(1.0, 0.0, "office hours", "prof", "2026-03-02T10:00:00Z", "exercise")),
        sc.CheckResult("test_b", "softmax", "failed", 0.0, 1, "", "hidden", 0.0, sc.Diagnosis("m1", "A mistake")),
        sc.CheckResult("test_c", "masking", "passed", 2, 2, "", "visible"),
    )
    return sc.Scorecard(
        "attention", sc.SubmissionInfo("attention.ipynb", "a" * 64), 3.0, 4.5, checks,
        environment={"python": "3.11", "isolation": {"netns": "active"}, "seed": 7, "cuda": False, 3: ("x", 1.5)},
        flags=(sc.Flag("print", 3, "a print call"),), output="printed\n", grader_error="it broke",
        notebook=sc.NotebookReport(9, 5, (sc.CellNote(2, 1, "!pip install x", "shell"),),
                                   (sc.CellNote(4, 2, "f()", "NameError"),)),
        figures={"worked_example": {"tokens": ("fluffy", "cat"), "student": [[1.0, 0.0], [0.5, 0.5]],
                                    "reference": ((1.0, 0.0), (0.5, 0.5)), "student_out": [[3.0], [1.5]],
                                    "reference_out": [[3.0], [1.5]]},
                 "head_entropy": {"error": "it raised"}},
        integrity=sc.Integrity("modified", ("grader/checks/x.py",)), problem="syntax error at line 1",
        diagnoses=(sc.ExerciseDiagnosis("softmax", "m1", "A mistake", "You did X.", ("test_a[float16]", "test_b"),
                                        also),
                   sc.ExerciseDiagnosis("masking", "m3", "Third", "You did Y.", ("test_c",))),
        late={"status": "late", "policy": "hourly", "rule": "10% an hour", "lateness_hours": 1.5, "raw_score": 3.0,
              "penalty_percent": 20, "penalty_points": 0.6, "final_score": 2.4},
        graded_at="2026-03-02T10:00:00Z", duration_s=1.25)


def round_trip_dict(card):
    """``Scorecard.to_dict`` as it was written before it built the dict itself: ``asdict`` through JSON,
    then the empty optional sections removed."""
    data = json.loads(json.dumps(dataclasses.asdict(card)))
    for optional in ("grader_error", "notebook", "figures", "integrity", "problem", "late"):
        if data[optional] is None:
            del data[optional]
    if not data["diagnoses"]:
        del data["diagnoses"]
    for named in data.get("diagnoses", ()):
        if not named["also"]:
            del named["also"]
    if "integrity" in data and not data["integrity"]["files"]:
        del data["integrity"]["files"]
    for check in data["checks"]:
        if check["override"] is None:
            del check["override"]
        if check["diagnosis"] is None:
            del check["diagnosis"]
        elif not check["diagnosis"]["also"]:
            del check["diagnosis"]["also"]
    return data


@pytest.mark.parametrize("variant", ["every field", "no optional field", "integrity without files"])
def test_the_cards_json_is_the_asdict_round_trips_text(variant):
    """The dict is built field by field now; its text must stay what ``asdict`` through JSON gave."""
    from grader import scorecard as sc

    card = every_field_card()
    if variant == "no optional field":
        card = dataclasses.replace(card, grader_error=None, notebook=None, figures=None, integrity=None, problem=None,
                                   diagnoses=(), late=None, flags=(), environment={},
                                   checks=tuple(dataclasses.replace(c, diagnosis=None, override=None)
                                                for c in card.checks))
    elif variant == "integrity without files":
        card = dataclasses.replace(card, integrity=sc.Integrity("verified"))
    want = round_trip_dict(card)
    assert card.to_dict() == want
    assert list(card.to_dict()) == list(want)  # the same key order, so the same text
    text = json.dumps(want, indent=2, sort_keys=False, allow_nan=False) + "\n"
    assert card.to_json() == text
    assert sc.to_valid_json(card) == text
    # What grade-all relies on to write a grader process's text as it is (final.Stage.fresh):
    # the card read back from its text, written again, is the same text.
    assert sc.to_valid_json(sc.Scorecard.from_dict(json.loads(text))) == text


def test_to_dict_copies_the_free_form_sections():
    """A caller that changes the dict it got must not change the (frozen) card."""
    card = every_field_card()
    data = card.to_dict()
    data["environment"]["isolation"]["netns"] = "changed"
    data["figures"]["worked_example"]["student"][0][0] = 9.0
    assert card.environment["isolation"]["netns"] == "active"
    assert card.figures["worked_example"]["student"][0][0] == 1.0


def json_values(rng, depth=0):
    """Random JSON-like data: nested dicts and lists (some empty, some of scalars only, some mixed)
    and every kind of scalar, strings with quotes, escapes and non-ASCII text."""
    texts = ["", "a", "quote \" and \\ back", "line\nbreak\t", "\u00e9\u4e2d\U0001f600", "\x00"]
    scalars = [lambda: rng.choice(texts), lambda: rng.randint(-10**20, 10**20), lambda: rng.uniform(-1e6, 1e6),
               lambda: rng.choice([0.0, -0.0, 1e-300, 1e300]), lambda: rng.choice([True, False, None])]
    kind = rng.random()
    if depth > 4 or kind < 0.4:
        return rng.choice(scalars)()
    size = rng.choice([0, 1, 2, 5])
    if kind < 0.7:
        return [json_values(rng, depth + 1) for _ in range(size)]
    if kind < 0.8:
        return tuple(json_values(rng, depth + 1) for _ in range(size))
    keys = ["k", "key \"q\"", "\u00e9", "x" * 3]
    return {rng.choice(keys) + str(i): json_values(rng, depth + 1) for i in range(size)}


def test_dumps_indented_writes_what_json_dumps_writes():
    import random

    from grader import scorecard as sc

    rng = random.Random(2026)
    for _ in range(2000):
        value = json_values(rng)
        assert dumps_indented(value) == json.dumps(value, indent=2, allow_nan=False)
    odd_keys = {1: [1, {2.5: "x", True: None}], "a": {None: 1}}  # json.dumps turns them into strings
    assert dumps_indented(odd_keys) == json.dumps(odd_keys, indent=2, allow_nan=False)
    for bad in (float("nan"), [1.0, float("inf")], {"a": [{"b": float("-inf")}]}):
        with pytest.raises(ValueError):
            dumps_indented(bad)
    with pytest.raises(TypeError):
        dumps_indented({"a": [object()]})
