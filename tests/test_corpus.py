"""Every mutant loses points in its own exercise with a message that names the bug;
every alternative correct implementation scores full marks. Adding a case is adding a file."""

from __future__ import annotations

import re

import pytest

from tests.conftest import CorpusCards
from tests.corpus_cases import corpus

MUTANTS = corpus("mutants")
ALTERNATIVES = corpus("alternatives")


def test_corpus_is_large_enough_and_every_case_builds():
    assert len(MUTANTS) >= 25 and len(ALTERNATIVES) >= 8
    for case in MUTANTS:
        assert {"exercise", "message", "why"} <= set(case.header), case.id
    for case in MUTANTS + ALTERNATIVES:
        compile(case.source(), case.id, "exec")  # every `replace` line still applies to the reference


def test_a_stale_replace_line_fails_loudly(tmp_path):
    import dataclasses

    case = next(c for c in MUTANTS if c.replacements)
    stale = dataclasses.replace(case, replacements=(("this text is not in the reference", "x"),))
    with pytest.raises(ValueError, match="exactly once"):
        stale.source()


@pytest.mark.parametrize("case", ALTERNATIVES, ids=lambda c: c.id)
def test_alternative_scores_full_marks(corpus_cards, case):
    card = corpus_cards[case.id]
    failing = [(c.id, c.message) for c in card.checks if c.status not in ("passed", "skipped")]
    assert card.grader_error is None
    assert not failing and card.score == card.max_score, failing[:3]


@pytest.mark.parametrize("case", MUTANTS, ids=lambda c: c.id)
def test_mutant_loses_points_with_a_teaching_message(corpus_cards, case):
    card = corpus_cards[case.id]
    assert card.grader_error is None
    assert card.score < card.max_score
    own = [c for c in card.checks if c.exercise == case.header["exercise"] and c.score < c.max_score]
    assert own, f"no check of {case.header['exercise']} lost points"
    pattern = re.compile(case.header["message"], re.IGNORECASE)
    assert any(pattern.search(c.message) for c in own), [c.message for c in own][:4]


def test_a_card_is_graded_when_first_read_so_k_selects_what_is_graded(monkeypatch, tmp_path):
    """`pytest tests/test_corpus.py -k NAME` grades only NAME's cases: reading one card grades that case
    alone, once; reading them all grades the rest (docs/adding-an-exercise.md runs the corpus tests with -k)."""
    graded: list[str] = []

    def grade(self, case):
        graded.append(case.id)
        return f"the card of {case.id}"

    monkeypatch.setattr(CorpusCards, "_grade", grade)
    cards = CorpusCards(server=None, folder=tmp_path, shared=None)
    one = MUTANTS[3].id
    assert cards[one] == f"the card of {one}" and cards[one] == f"the card of {one}"
    assert graded == [one] and len(cards) == len(MUTANTS) + len(ALTERNATIVES)
    assert dict(cards.items()) == {c.id: f"the card of {c.id}" for c in MUTANTS + ALTERNATIVES}
    assert sorted(graded) == sorted(c.id for c in MUTANTS + ALTERNATIVES)
    with pytest.raises(KeyError):
        cards["attention/mutants/no_such_case"]
