"""Every check fails only for its own property (issue 11): blame is measured on the corpus and kept at 0.

A mutant may fail its own exercise's output checks, the output checks of the exercises that call
it, and what its ``# may_fail:`` header lists (``tests/blame.py`` says exactly what counts); any
other failing check blames a property the student did not break. The cards come from the
session's ``corpus_cards``; ``bench/blame.py`` prints the same figures.
"""

from __future__ import annotations

import pytest

from tests.blame import callers, catch, expanded, has_may_fail, may_fail_globs, out_of_set
from tests.corpus_cases import corpus

MUTANTS = corpus("mutants")


def test_every_mutant_states_what_it_may_fail():
    missing = [c.id for c in MUTANTS if not has_may_fail(c)]
    assert not missing, f"add a `# may_fail:` header line (globs, or `none`) to {missing[:5]}"


def test_no_mutant_names_an_exercise_that_calls_it():
    """What a mutant breaks in its callers is derived from the reference's call graph (``callers::``), so a new
    exercise that calls an old one needs no edit to the old one's mutants."""
    named = [(c.id, g) for c in MUTANTS for g in may_fail_globs(c)
             if g.split("::", 1)[0] in callers(c.assignment, c.header["exercise"])]
    assert not named, f"write these as `callers::<check glob>`: {named[:5]}"


def test_callers_globs_reach_every_exercise_that_calls_the_mutants_and_no_other():
    for case in MUTANTS:
        calling = callers(case.assignment, case.header["exercise"])
        for glob in (g for g in may_fail_globs(case) if g.startswith("callers::")):
            reached = {g.split("::", 1)[0] for g in expanded((glob,), calling)}
            assert reached == set(calling), (case.id, glob, reached)


@pytest.mark.parametrize("case", MUTANTS, ids=lambda c: c.id)
def test_a_mutant_fails_no_check_outside_its_set_and_still_loses_points_in_its_exercise(corpus_cards, case):
    card = corpus_cards[case.id]
    blamed = [(k, next(c.message for c in card.checks if f"{c.exercise}::{c.id}" == k)[:160])
              for k in out_of_set(case, card)]
    assert not blamed, f"checks failed for a property this mutant does not break: {blamed[:3]}"
    assert catch(case, card), f"{case.id} no longer loses points in {case.header['exercise']}"


@pytest.mark.parametrize("case", MUTANTS, ids=lambda c: c.id)
def test_a_mutant_loses_no_point_outside_its_exercise_and_the_exercises_that_call_it(corpus_cards, case):
    """Not punished beyond the bug, in points: every exercise neither the mutant's own nor one that calls it
    (the reference's call graph) keeps its full score."""
    card = corpus_cards[case.id]
    exercise = case.header["exercise"]
    reach = {exercise} | callers(case.assignment, exercise)
    lost = {}
    for c in card.checks:
        if c.exercise not in reach and c.status != "skipped":
            lost[c.exercise] = lost.get(c.exercise, 0.0) + c.max_score - c.score
    assert not any(lost.values()), f"points lost outside {sorted(reach)}: {lost}"


NONDETERMINISTIC = [c for c in MUTANTS if c.header.get("nondeterministic") == "true"]


def test_the_nondeterministic_mutants_are_there():
    """Always-on functional dropout, torch.randn noise in forward, dropout left on in eval: each is a mutant."""
    names = {c.path.stem for c in NONDETERMINISTIC}
    assert {"head_dropout_always_on_fixed", "head_noise_in_forward", "head_dropout_in_eval",
            "mha_dropout_in_eval"} <= names, names


@pytest.mark.parametrize("case", NONDETERMINISTIC, ids=lambda c: c.id)
def test_a_nondeterministic_mutant_keeps_at_least_half_of_its_module(corpus_cards, case):
    """Its noise is judged once, by the checks whose property it is; every other check compares the code with
    itself under one random state, so at least half of the module's points stay."""
    card = corpus_cards[case.id]
    own = [c for c in card.checks if c.exercise == case.header["exercise"]]
    score, total = sum(c.score for c in own), sum(c.max_score for c in own)
    assert total and score >= total / 2, (
        f"{case.id} keeps {score:g} of {total:g}: " + "; ".join(f"{c.id}: {c.message[:80]}" for c in own if c.score < c.max_score))
