"""The clause table (docs/contract-clauses.md) is true: every clause of the contract is enforced by
checks that exist, and proven by a corpus case that breaks it (or, for a freedom, uses it)."""

from __future__ import annotations

import re

import pytest

from grader.config import load_config
from tests.contract_clauses import (
    CONTRACT, MARKDOWN, ROOT, SHARED_CONTRACT, WRITE_COMMAND, Clause, ContractMissing, builds_on, check_functions,
    contract_blocks, expand_checks, load_clauses, missing_blocks, read_contract, render,
)
from tests.corpus_cases import corpus

CLAUSES = load_clauses()
CONFIG = load_config()
CASES = {c.id: c for c in corpus("mutants") + corpus("alternatives")}


def _configured(assignment: str) -> dict[str, set[str]]:
    """exercise -> the check names assignments.yaml gives points to."""
    return {ex.name: {c.name for c in ex.checks} for ex in CONFIG.assignment(assignment).exercises}


def _allowed_to_lose(assignment: str, exercise: str) -> set[str]:
    """The exercise itself and every exercise whose reference builds on it (calls it)."""
    a = CONFIG.assignment(assignment)
    graph = builds_on(a.reference, {ex.name for ex in a.exercises})
    return {exercise} | {user for user, deps in graph.items() if exercise in deps}


def _mutant_params() -> list:
    return [pytest.param(c, m, id=f"{c.id}:{m.case.rsplit('/', 1)[-1]}") for c in CLAUSES for m in c.mutants]


def _alternative_params() -> list:
    return [pytest.param(c, a, id=f"{c.id}:{a.rsplit('/', 1)[-1]}") for c in CLAUSES for a in c.alternatives]


def test_the_markdown_is_generated_from_the_yaml():
    expected = render(CLAUSES)
    current = MARKDOWN.read_text(encoding="utf-8") if MARKDOWN.is_file() else ""
    assert current == expected, f"{MARKDOWN.name} is out of date with docs/contract-clauses.yaml; run {WRITE_COMMAND}"


def test_clauses_are_well_formed():
    ids = [c.id for c in CLAUSES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for c in CLAUSES:
        assert c.kind in ("requirement", "freedom"), c.id
        exercises = set(_configured(c.assignment))
        assert c.subject == ("*",) or set(c.subject) <= exercises, f"{c.id}: unknown subject {c.subject}"
        for key in c.checks:
            assert key == "*" or key in (exercises if c.subject == ("*",) else set(c.subject)), (
                f"{c.id}: checks of {key!r}, which is not the clause's subject")
        if c.kind == "requirement":
            assert c.checks, f"{c.id}: a requirement needs the checks that enforce it"
            assert not c.alternatives, f"{c.id}: alternatives prove freedoms; a requirement is proven by mutants"
        else:
            assert not c.mutants, f"{c.id}: nothing can break a freedom; prove it with an alternative"


def test_every_listed_check_exists_and_is_configured():
    for c in CLAUSES:
        configured = _configured(c.assignment)
        defined = check_functions(CONFIG.assignment(c.assignment).checks_dir)
        for exercise, names in c.checks.items():
            for name in names:
                assert name in defined, f"{c.id}: there is no check function {name} in {c.assignment}'s checks"
                if exercise == "*":
                    assert any(name in checks for checks in configured.values()), f"{c.id}: {name} earns no points"
                else:
                    assert name in configured.get(exercise, set()), (
                        f"{c.id}: {name} is not configured for {exercise} in assignments.yaml")


def test_every_listed_case_exists_and_agrees_with_its_header():
    for c in CLAUSES:
        for ref in c.mutants:
            case = CASES.get(ref.case)
            assert case is not None and case.kind == "mutants", f"{c.id}: no mutant {ref.case} in tests/corpus"
            assert case.assignment == c.assignment, f"{c.id}: {ref.case} belongs to {case.assignment}"
            assert c.subject == ("*",) or case.header["exercise"] in c.subject, (
                f"{c.id}: {ref.case} is a mutant of {case.header['exercise']}, not of {', '.join(c.subject)}")
        for alt in c.alternatives:
            case = CASES.get(alt)
            assert case is not None and case.kind == "alternatives", f"{c.id}: no alternative {alt} in tests/corpus"
    for case in CASES.values():
        named = case.header.get("clause")
        if named:
            owners = {c.id for c in CLAUSES if any(m.case == case.id for m in c.mutants)}
            assert named in owners, f"{case.id} says `# clause: {named}`, but that clause does not list it ({owners})"


def test_every_contract_name_has_its_clauses():
    for assignment in CONFIG.assignments.values():
        named = {s for c in CLAUSES if c.assignment == assignment.id for s in c.subject}
        missing = [ex.name for ex in assignment.exercises if ex.name not in named]
        assert not missing, f"{assignment.id}: no clause is about {missing}"


def test_the_contract_names_are_the_exercises():
    rows = re.findall(r"^\| `(\w+)[(`]", read_contract(), flags=re.MULTILINE)
    exercises = [ex.name for a in CONFIG.assignments.values() for ex in a.exercises]
    assert sorted(set(rows)) == sorted(exercises)


def test_every_quote_is_from_the_contract():
    contract = " ".join(read_contract().split())
    misquoted = [c.id for c in CLAUSES if c.text not in contract]
    assert not misquoted, f"these clauses do not quote docs/CONTRACT.md verbatim: {misquoted}"


def test_the_contract_is_the_projects_own_and_ends_with_its_additions():
    assert CONTRACT == ROOT / "docs" / "CONTRACT.md"
    headings = [b for b in contract_blocks(read_contract()) if b.startswith("## ")]
    assert headings[-1] == "## Additions", f"docs/CONTRACT.md must end with its Additions section, not {headings[-1]!r}"


def test_a_missing_contract_fails_and_says_what_to_do(tmp_path):
    with pytest.raises(ContractMissing, match="CONTRACT.md is missing: it is the student contract this project owns"):
        read_contract(tmp_path / "CONTRACT.md")


def test_the_shared_contract_is_contained_word_for_word():
    """The course's text, where this checkout sits beside it, is in docs/CONTRACT.md unchanged and in order
    (whitespace aside); docs/CONTRACT.md may add table rows, sections and its Additions around it."""
    ours = read_contract()
    if not SHARED_CONTRACT.is_file():
        pytest.skip(f"{SHARED_CONTRACT} is not next to this checkout: nothing to compare docs/CONTRACT.md with")
    missing = missing_blocks(SHARED_CONTRACT.read_text(encoding="utf-8"), ours)
    assert not missing, (f"docs/CONTRACT.md changed, dropped or moved {len(missing)} block(s) of "
                         f"{SHARED_CONTRACT}; the first: {missing[0][:300]!r}")


def test_containment_ignores_wrapping_and_allows_additions_only():
    shared = "# T\n\nA paragraph\nwrapped here.\n\n| a | b |\n|---|---|\n| `f(x)` | one |\n\n- item\n  two\n"
    assert missing_blocks(shared, shared.replace("paragraph\nwrapped", "paragraph wrapped\n")) == []
    assert missing_blocks(shared, shared.replace("| `f(x)` | one |", "| `f(x)` | one |\n| `g(x)` | new |")
                          + "\n## Additions\n\n- more\n") == []
    assert missing_blocks(shared, shared.replace("one", "two")) == ["| `f(x)` | one |"]
    assert missing_blocks(shared, shared.replace("- item\n  two\n", "") + "- item two\n") == []
    moved = "# T\n\n- item two\n\nA paragraph wrapped here.\n\n| a | b |\n|---|---|\n| `f(x)` | one |\n"
    assert missing_blocks(shared, moved) == ["- item two"]


def test_every_clause_is_proven_or_says_why():
    unproven = [c.id for c in CLAUSES if not c.proven and not c.mutant_missing]
    assert not unproven, f"clauses with no corpus case and no `mutant_missing: reason`: {unproven}"
    stale = [c.id for c in CLAUSES if c.proven and c.mutant_missing]
    assert not stale, f"clauses proven by a case that still say why they are not: {stale}"


@pytest.mark.parametrize("clause, ref", _mutant_params())
def test_mutant_breaks_its_clause_and_nothing_else(corpus_cards, clause: Clause, ref):
    """Loses points in one of the clause's checks of its own exercise, and nowhere it should not."""
    card = corpus_cards[ref.case]
    case = CASES[ref.case]
    exercise = case.header["exercise"]
    assert card.grader_error is None, card.grader_error
    lost = [(c.exercise, c.id.split("[")[0]) for c in card.checks if c.score < c.max_score]
    enforced = expand_checks(clause, _configured(clause.assignment))
    assert any(pair in enforced and pair[0] == exercise for pair in lost), (
        f"{ref.case} loses no points in {clause.id}'s checks of {exercise}; in {exercise} it lost "
        f"{sorted({name for ex, name in lost if ex == exercise})[:6]}")
    allowed = _allowed_to_lose(clause.assignment, exercise) | set(ref.also_loses)
    elsewhere = sorted({ex for ex, _ in lost} - allowed)
    assert not elsewhere, (
        f"{ref.case} breaks more than {clause.id}: it also loses points in {elsewhere}, which do not build on "
        f"{exercise}; narrow the mutant, or name the check that runs {exercise} in `also_loses`")
    unused = sorted(set(ref.also_loses) - {ex for ex, _ in lost})
    assert not unused, f"{ref.case}: also_loses names {unused}, where it loses nothing; drop them"


@pytest.mark.parametrize("clause, alternative", _alternative_params())
def test_freedom_is_granted(corpus_cards, clause: Clause, alternative: str):
    card = corpus_cards[alternative]
    failing = [(c.id, c.message[:120]) for c in card.checks if c.status not in ("passed", "skipped")]
    assert card.grader_error is None and not failing and card.score == card.max_score, (
        f"{alternative} relies on the freedom {clause.id} and must score full marks: {failing[:3]}")
