"""Every mutant loses points in its own exercise with a message that names the bug;
every alternative correct implementation scores full marks. Adding a case is adding a file."""

from __future__ import annotations

import ast
import re

import pytest

from tests.conftest import CorpusCards
from tests.corpus_cases import REFERENCE, corpus, read_header

MUTANTS = corpus("mutants")
ALTERNATIVES = corpus("alternatives")


def test_corpus_is_large_enough_and_every_case_builds():
    assert len(MUTANTS) >= 25 and len(ALTERNATIVES) >= 8
    for case in MUTANTS:
        assert {"exercise", "message", "why"} <= set(case.header), case.id
    for case in MUTANTS + ALTERNATIVES:
        compile(case.source(), case.id, "exec")  # every `replace` line still applies to the reference


def test_a_replace_line_is_refused(tmp_path):
    case = tmp_path / "patched.py"
    case.write_text("# expect: lose\n# exercise: softmax\n# replace: e.sum( ==> e.mean(\n")
    with pytest.raises(ValueError, match="write the changed definition whole"):
        read_header(case)


def with_every_line_defined_again(reference: str) -> str:
    """The reference plus, for each of its functions and classes, a copy under a new name: every line of it
    now occurs twice (as an exercise added by copying another's code does)."""
    tree = ast.parse(reference)
    copies = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            copies.append(ast.get_source_segment(reference, node).replace(f"{node.name}(", f"{node.name}_again(", 1))
    return reference + "\n\n" + "\n\n".join(copies) + "\n"


@pytest.mark.parametrize("assignment", sorted(REFERENCE))
def test_a_new_definition_in_the_reference_breaks_no_case(tmp_path, monkeypatch, assignment):
    """Each case's definitions are whole, so what the reference adds changes none of them: with every line
    of the reference defined a second time, every case still builds and defines what it defined before."""
    import tests.corpus_cases as corpus_cases

    cases = [c for c in corpus("mutants") + corpus("alternatives") + corpus("placeholders") + corpus("hostile")
             if c.assignment == assignment and c.base == "reference"]
    before = {c.id: definitions(c.source()) for c in cases}
    grown = tmp_path / "reference.py"
    grown.write_text(with_every_line_defined_again(REFERENCE[assignment].read_text()))
    monkeypatch.setitem(corpus_cases.REFERENCE, assignment, grown)
    for case in cases:
        after = definitions(case.source())
        assert {k: v for k, v in after.items() if not k.endswith("_again")} == before[case.id], case.id


def definitions(source: str) -> dict[str, str]:
    """Each top-level name's last definition, as the module ends up with it."""
    return {n.name: ast.dump(n) for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


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
