"""Scoring fails closed: points only from a recorded pass."""

from __future__ import annotations

import dataclasses

import pytest

from grader.session import ChecksBroken, Verdict
from grader.session.verdicts import check_verdict
from grader.config import load_config
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
