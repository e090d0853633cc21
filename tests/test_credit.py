"""Credit only for work done: placeholders earn (almost) nothing, real attempts keep their partial credit.

Each exercise has one gate check (``gate: true`` in assignments.yaml, judged by
``grader/checks/work.py``); scoring credits the exercise's other checks only
once it passed. The placeholders are files in ``tests/corpus/*/placeholders``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from grader.config import ConfigError, load_config
from grader.scorecard import Scorecard
from grader.scoring import check_results
from tests import blame
from tests.conftest import ROOT
from tests.corpus_cases import corpus, grade_corpus
from tests.test_scoring import ATTENTION, everything_passed

PLACEHOLDERS = corpus("placeholders")
LIMIT = 0.05  # the share of an assignment's points a placeholder may earn at most


def gates(card: Scorecard) -> list:
    config = load_config(ROOT / "assignments.yaml").assignment(card.assignment)
    names = {(ex.name, c.name) for ex in config.exercises for c in ex.checks if c.gate}
    return [c for c in card.checks if (c.exercise, c.id.split("[")[0]) in names]


@pytest.fixture(scope="module")
def placeholder_cards(server) -> dict[str, Scorecard]:
    return {case.id: card for case, card in grade_corpus(PLACEHOLDERS, server)}


def test_the_corpus_has_placeholders_for_both_assignments():
    assert {c.assignment for c in PLACEHOLDERS} == {"attention", "attention-modules"}
    assert all(c.header.get("expect") == "placeholder" and c.header.get("why") for c in PLACEHOLDERS)


@pytest.mark.parametrize("case", PLACEHOLDERS, ids=lambda c: c.id)
def test_a_placeholder_earns_at_most_five_percent(placeholder_cards, case):
    card = placeholder_cards[case.id]
    earned = [(c.id, c.exercise, c.score) for c in card.checks if c.score > 0]
    assert card.max_score > 0 and card.score <= LIMIT * card.max_score, (
        f"{case.id} ({case.header['why']}) scored {card.score} / {card.max_score}: {earned}")


@pytest.mark.parametrize("case", PLACEHOLDERS, ids=lambda c: c.id)
def test_every_gate_of_a_placeholder_says_what_it_saw(placeholder_cards, case):
    card = placeholder_cards[case.id]
    assert gates(card), "no gate check on the card"
    for gate in gates(card):
        assert gate.status == "failed", (gate.id, gate.exercise, gate.status, gate.message)
        assert "looks like a placeholder" in gate.message and f"`{gate.exercise}`" in gate.message
        assert any(seen in gate.message for seen in ("single value", "handed back", "changes with the random state but not with the input",
                                                     "exactly the same for different")), gate.message


def test_no_correct_alternative_or_single_bug_mutant_is_taken_for_a_placeholder(corpus_cards):
    """Only a mutant that does no work in its exercise (``return scores`` in scale_scores: its input handed
    back) may fail a gate, and its ``# may_fail:`` header says so; an alternative never."""
    cases = {c.id: c for c in corpus("mutants") + corpus("alternatives")}
    judged = {case_id: [g for g in gates(card) if "looks like a placeholder" in g.message
                        and blame.key(g) not in blame.allowed(cases[case_id], card)]
              for case_id, card in corpus_cards.items()}
    assert all(gates(card) for card in corpus_cards.values())
    assert {k: [(g.exercise, g.message[:120]) for g in v] for k, v in judged.items() if v} == {}


def test_passing_checks_of_an_exercise_whose_gate_failed_earn_nothing():
    outcomes = [dataclasses.replace(o, status="failed", message="its output holds the single value 0")
                if o.exercise == "softmax" and o.test == "test_output_is_not_a_placeholder" else o
                for o in everything_passed()]
    results = check_results(outcomes, ATTENTION)
    softmax = [r for r in results if r.exercise == "softmax"]
    assert softmax and all(r.score == 0 and r.status == "failed" for r in softmax)
    assert all("test_output_is_not_a_placeholder" in r.message for r in softmax if "placeholder" not in r.id)
    others = [r for r in results if r.exercise != "softmax"]
    assert all(r.score == r.max_score for r in others)


def test_a_gate_that_did_not_run_credits_nothing():
    outcomes = [o for o in everything_passed()
                if not (o.exercise == "softmax" and o.test == "test_output_is_not_a_placeholder")]
    results = check_results(outcomes, ATTENTION)
    assert sum(r.score for r in results if r.exercise == "softmax") == 0
    assert sum(r.score for r in results if r.exercise != "softmax") == ATTENTION.max_points - sum(
        c.points for c in ATTENTION.exercise("softmax").checks)


def test_an_exercise_with_two_gates_is_refused(tmp_path: Path):
    text = (ROOT / "assignments.yaml").read_text().replace(
        "test_softmax_written_by_hand: 2", "test_softmax_written_by_hand: {points: 2, gate: true}")
    (tmp_path / "assignments.yaml").write_text(text)
    with pytest.raises(ConfigError, match="at most one gate check"):
        load_config(tmp_path / "assignments.yaml")


def test_the_student_kit_withholds_credit_as_the_course_does():
    """The kit's own assignments.yaml keeps every gate, so `grader check` scores a placeholder as grading does."""
    import yaml

    from grader.release import kit

    config = load_config(ROOT / "assignments.yaml")
    written = yaml.safe_load(kit.kit_config(config, {aid: 0 for aid in config.assignments}))
    for aid, a in config.assignments.items():
        for ex in a.exercises:
            gate = next(c for c in ex.checks if c.gate)
            assert written["assignments"][aid]["exercises"][ex.name]["checks"][gate.name] == {"points": 0, "gate": True}
