"""Every check fails only for its own property (issue 11): blame is measured on the corpus and kept at 0.

A mutant may fail its own exercise's output checks, the output checks of the exercises that call
it, and what its ``# may_fail:`` header lists (``tests/blame.py`` says exactly what counts); any
other failing check blames a property the student did not break. The cards come from the
session's ``corpus_cards``; ``bench/blame.py`` prints the same figures.
"""

from __future__ import annotations

import pytest

from tests.blame import catch, has_may_fail, out_of_set
from tests.corpus_cases import corpus

MUTANTS = corpus("mutants")


def test_every_mutant_states_what_it_may_fail():
    missing = [c.id for c in MUTANTS if not has_may_fail(c)]
    assert not missing, f"add a `# may_fail:` header line (globs, or `none`) to {missing[:5]}"


@pytest.mark.parametrize("case", MUTANTS, ids=lambda c: c.id)
def test_a_mutant_fails_no_check_outside_its_set_and_still_loses_points_in_its_exercise(corpus_cards, case):
    card = corpus_cards[case.id]
    blamed = [(k, next(c.message for c in card.checks if f"{c.exercise}::{c.id}" == k)[:160])
              for k in out_of_set(case, card)]
    assert not blamed, f"checks failed for a property this mutant does not break: {blamed[:3]}"
    assert catch(case, card), f"{case.id} no longer loses points in {case.header['exercise']}"
