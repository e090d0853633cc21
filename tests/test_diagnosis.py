"""Diagnosis: a failed check names the catalogued mistake its answers match, and only then.

The catalogue (grader/diagnosis/catalogue) and the corpus mutants are checked
against each other: every mistake has a mutant that makes it, and every mutant's
``# diagnosis:`` header names what its card must say. The cards come from the
session's ``corpus_cards``.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.checks.helpers import all_close
from grader.config import load_config
from grader.diagnosis.catalogue import CatalogueError, Mistake, definition_span, load_catalogue, read_mistake
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from grader.diagnosis.naming import diagnosis
from tests.corpus_cases import REFERENCE, corpus, diagnosis_outcome, expected_diagnosis

MUTANTS = corpus("mutants")
ALTERNATIVES = corpus("alternatives")
ASSIGNMENTS = ("attention", "attention-modules")


def test_every_catalogued_mistake_applies_to_the_reference_and_has_a_mutant():
    named = {(c.assignment, expected_diagnosis(c)) for c in MUTANTS}
    exercises = {a: {ex.name for ex in load_config().assignment(a).exercises} for a in ASSIGNMENTS}
    for assignment in ASSIGNMENTS:
        mistakes = load_catalogue(assignment)
        assert len(mistakes) >= 20, assignment
        for mistake in mistakes:
            assert mistake.exercise in exercises[assignment], f"{mistake.id}: unknown exercise {mistake.exercise}"
            assert mistake.source(REFERENCE[assignment].read_text()) != REFERENCE[assignment].read_text(), mistake.id
            mistake.variant(REFERENCE[assignment])  # the patched reference loads
            assert (assignment, mistake.id) in named, f"no corpus mutant makes the catalogued mistake {mistake.id}"


def test_every_mutant_header_names_a_catalogued_mistake_or_says_why_not():
    ids = {(a, m.id) for a in ASSIGNMENTS for m in load_catalogue(a)}
    for case in MUTANTS:
        header = case.header.get("diagnosis")
        assert header, f"{case.id}: add a `# diagnosis:` header (a catalogue id, or `none (why)`)"
        if header.startswith("none"):
            assert len(header) > len("none ("), f"{case.id}: say why no diagnosis is possible"
        else:
            assert (case.assignment, header) in ids, f"{case.id}: no catalogued mistake {header!r}"


def test_a_stale_or_malformed_catalogue_file_fails_loudly(tmp_path):
    bad = tmp_path / "attention" / "broken.yaml"
    bad.parent.mkdir()
    bad.write_text("exercise: softmax\ntitle: short\n")
    with pytest.raises(CatalogueError, match="broken.yaml"):
        read_mistake(bad, "attention")
    stale = tmp_path / "attention" / "stale.yaml"
    stale.write_text("exercise: softmax\ntitle: a mistake whose patch is stale\nexplanation: it no longer applies\n"
                     "replace:\n- {old: this line is not in the reference, new: x}\n")
    bad.unlink()
    (mistake,) = load_catalogue("attention", root=tmp_path)
    with pytest.raises(CatalogueError, match="exactly once"):
        mistake.variant(REFERENCE["attention"])


EDITS = [(a, m) for a in ASSIGNMENTS for m in load_catalogue(a) if m.replace]


@pytest.mark.parametrize("assignment, mistake", EDITS, ids=[f"{a}/{m.id}" for a, m in EDITS])
def test_a_new_definition_holding_an_entrys_line_breaks_no_catalogue_entry(assignment, mistake):
    """An exercise added to the reference may hold the very line an entry edits (its own ``return weights @ v``):
    the edit applies in the definition of the entry's exercise and leaves the new one as it is."""
    reference = REFERENCE[assignment].read_text()
    start, end = definition_span(reference, mistake.exercise)
    copy = re.sub(rf"^(def|class) {mistake.exercise}\b", r"\1 added_exercise", reference[start:end], count=1)
    grown = reference + "\n\n" + copy
    patched = mistake.source(grown)
    tail = reference[end:] + "\n\n" + copy
    assert patched[:start] == reference[:start] and patched.endswith(tail)  # the new definition untouched too
    own = patched[start:len(patched) - len(tail)]
    assert own != reference[start:end] and all(new in own for _, new in mistake.replace)


def test_an_edit_outside_its_exercises_definition_is_refused_with_the_exercise_named():
    reference = REFERENCE["attention"].read_text()
    _, line = next((m, old) for m in load_catalogue("attention") for old, _ in m.replace if m.exercise == "apply_mask")
    elsewhere = Mistake(id="elsewhere", assignment="attention", exercise="softmax", title="t", explanation="e",
                        replace=((line, "x"),))
    with pytest.raises(CatalogueError, match="definition of `softmax`"):
        elsewhere.source(reference)
    nowhere = Mistake(id="nowhere", assignment="attention", exercise="no_such_exercise", title="t", explanation="e",
                      replace=((line, "x"),))
    with pytest.raises(CatalogueError, match="defines no function or class `no_such_exercise`"):
        nowhere.source(reference)


@pytest.mark.parametrize("case", [c for c in MUTANTS if expected_diagnosis(c)], ids=lambda c: c.id)
def test_mutant_gets_its_own_diagnosis(corpus_cards, case):
    card = corpus_cards[case.id]
    outcome = diagnosis_outcome(card, expected_diagnosis(case))
    named = [(c.id, c.diagnosis) for c in card.checks if c.diagnosis]
    assert outcome == "right", f"{outcome}: expected {expected_diagnosis(case)}, the card names {named[:4]}"


@pytest.mark.parametrize("case", ALTERNATIVES + [c for c in MUTANTS if not expected_diagnosis(c)], ids=lambda c: c.id)
def test_no_diagnosis_without_a_catalogued_mistake(corpus_cards, case):
    named = [(c.id, c.diagnosis.id) for c in corpus_cards[case.id].checks if c.diagnosis]
    assert not named, named


def test_diagnoses_sit_only_on_failed_checks_and_are_spelled_out(corpus_cards):
    titles = {m.id: m.title for a in ASSIGNMENTS for m in load_catalogue(a)}
    seen = 0
    for card in corpus_cards.values():
        for check in card.checks:
            if check.diagnosis is None:
                continue
            seen += 1
            assert check.status in ("failed", "error"), check
            assert check.diagnosis.title == titles[check.diagnosis.id]
            said = [d for d in card.diagnoses if d.exercise == check.exercise and check.id in d.checks]
            assert len(said) == 1 and said[0].id == check.diagnosis.id  # said once, for its exercise
            assert said[0].text.startswith("Likely mistake: your results match") and check.diagnosis.title in said[0].text
            assert said[0].text not in check.message
    assert seen > 50


def test_two_mistakes_that_match_alike_are_named_together(tmp_path):
    """When the evidence cannot tell two mistakes apart, both are named; neither is picked."""
    folder = tmp_path / "attention"
    folder.mkdir()
    patch = ("replace:\n- old: 'return scores / math.sqrt(head_size)'\n"
             "  new: 'return scores / head_size'\n")
    for name in ("one", "two"):
        (folder / f"{name}.yaml").write_text(
            f"exercise: scale_scores\ntitle: divided by head_size ({name})\nexplanation: divide by its square root\n{patch}")
    import torch

    mistakes = load_catalogue("attention", root=tmp_path)
    diagnoser = Diagnoser(REFERENCE["attention"], mistakes)
    scores = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    message = {"op": "call", "fn": "scale_scores", "args": [scores, 16], "kwargs": {}, "seed": 0, "vjp": None,
               "return_args": False}
    wrong = {"ok": True, "value": scores / 16}
    found = diagnoser.matching("scale_scores", [(message, wrong)])
    assert [m.id for m in found] == ["one", "two"]
    named, text = diagnosis(found)
    assert named.id == "one" and [m.id for m in named.also] == ["two"]
    assert "each of 2 known mistakes" in text and "(one)" in text and "(two)" in text
    right = {"ok": True, "value": scores / 4}
    assert diagnoser.matching("scale_scores", [(message, right)]) == []  # the reference's answer: nothing to name
    other = {"ok": True, "value": scores * 4}
    assert diagnoser.matching("scale_scores", [(message, other)]) == []  # wrong, but not a catalogued mistake


def test_the_message_names_the_mistake_in_the_lessons_words(corpus_cards):
    card = corpus_cards["attention/mutants/attention_softmax_over_queries"]
    messages = [d.text for d in card.diagnoses if d.id == "attention_softmax_over_queries"]
    assert messages
    assert re.search(r"softmax taken over the query dimension \(dim=-2\).*use dim=-1", messages[0], re.I | re.S)


def _call(fn: str, *args) -> dict:
    """A request as the proxy records it: a plain call, seeded, no gradient."""
    return {"op": "call", "fn": fn, "args": list(args), "kwargs": {}, "seed": 0, "vjp": None, "return_args": False}


def _raises(exc_type: str, message: str) -> dict:
    """The child's reply when the student's code raised (grader/sandbox/child.py's describe_exception)."""
    return {"ok": False, "kind": "exception", "type": exc_type, "message": message}


def _split_heads_evidence(bad_reply: dict) -> list:
    """split_heads that gives head h every H-th channel (catalogued: split_heads_interleaved), and what it
    does with C % n_heads != 0 (10 channels, 3 heads), where the contract asks for a ValueError."""
    import torch

    x = torch.randn(2, 3, 12, generator=torch.Generator().manual_seed(1))
    interleaved = x.reshape(2, 3, 4, 3).permute(0, 3, 1, 2)
    return [(_call("split_heads", x, 3), {"ok": True, "value": interleaved}),
            (_call("split_heads", torch.randn(2, 3, 10), 3), bad_reply)]


def test_an_exception_is_matched_by_its_type_not_its_wording():
    """The catalogue's variant words its ValueError its own way; a student's other words still match."""
    mistakes = load_catalogue("attention")
    interleaved = next(m for m in mistakes if m.id == "split_heads_interleaved")
    assert "C must be divisible by n_heads" in interleaved.define  # the wording the student does not use
    diagnoser = Diagnoser(REFERENCE["attention"], mistakes)
    evidence = _split_heads_evidence(_raises("ValueError", "cannot split 10 channels into 3 heads of equal width"))
    found = diagnoser.matching("split_heads", evidence)
    assert [m.id for m in found] == ["split_heads_interleaved"]
    # settling across the card reads the passed checks' answers too (the ValueError): the mistake stays named
    settled = diagnoser.settle([CheckEvidence("split_heads", "failed", tuple(found), tuple(evidence[:1])),
                                CheckEvidence("split_heads", "passed", (), tuple(evidence[1:]))])
    assert [[m.id for m in s] for s in settled] == [["split_heads_interleaved"], []]
    # an assert in place of the ValueError, with a message of the student's own, is the catalogued assert
    x = evidence[0][0]["args"][0]
    asserted = [(evidence[0][0], {"ok": True, "value": x.view(2, 3, 3, 4).transpose(1, 2)}),
                (evidence[1][0], _raises("AssertionError", "heads!"))]
    assert [m.id for m in diagnoser.matching("split_heads", asserted)] == ["split_heads_assert"]


def test_an_exception_where_the_contract_asks_for_none_is_matched_by_its_words_too():
    """Where the reference returns, an exception is a failure inside running code, and its words say
    which: a ValueError the student's own softmax raises is not the ValueError of unpacking what an
    `attention` returning only `out` gives (catalogued: attention_returns_out_only)."""
    import torch

    mistakes = load_catalogue("attention")
    out_only = next(m for m in mistakes if m.id == "attention_returns_out_only")
    diagnoser = Diagnoser(REFERENCE["attention"], mistakes)
    g = torch.Generator().manual_seed(5)
    x, *w = (torch.randn(*shape, generator=g) for shape in ((1, 4, 8), (8, 8), (8, 8), (8, 8), (8, 8)))
    request = _call("multi_head_attention", x, *w, 2)
    try:
        out_only.variant(REFERENCE["attention"]).multi_head_attention(x, *w, 2)
    except ValueError as exc:
        unpacking = str(exc)
    assert "unpack" in unpacking
    found = diagnoser.matching("multi_head_attention", [(request, _raises("ValueError", unpacking))])
    assert [m.id for m in found] == ["attention_returns_out_only"]
    theirs = _raises("ValueError", "softmax is broken on purpose")
    assert diagnoser.matching("multi_head_attention", [(request, theirs)]) == []


def test_an_exception_of_another_type_is_not_matched():
    """Same outputs, but a TypeError where the variant raises ValueError: not the catalogued mistake."""
    diagnoser = Diagnoser(REFERENCE["attention"], load_catalogue("attention"))
    other_type = _raises("TypeError", "C must be divisible by n_heads")  # even in the catalogue's very words
    assert diagnoser.matching("split_heads", _split_heads_evidence(other_type)) == []


def test_a_runtime_error_is_matched_by_torchs_first_line_sizes_included():
    """torch raises RuntimeError for nearly everything, so its words say which operation failed: the first
    line, sizes included (on the same inputs the same mistake fails on the same sizes). A RuntimeError in other
    words, or on other sizes, is another failure."""
    import torch

    q, k = (torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(s)) for s in (2, 3))
    try:
        q @ k.permute(2, 1, 0)  # what `q @ k.T` does with a batch dim (k.T reverses every dim)
    except RuntimeError as exc:
        torch_words = str(exc)
    diagnoser = Diagnoser(REFERENCE["attention"], load_catalogue("attention"))
    request = _call("attention_scores", q, k)
    found = diagnoser.matching("attention_scores", [(request, _raises("RuntimeError", torch_words + "\nsecond line: ignored"))])
    assert [m.id for m in found] == ["attention_scores_k_T"]
    other_numbers = re.sub(r"\d+", "7", torch_words)
    assert other_numbers.splitlines()[0] != torch_words.splitlines()[0]
    assert diagnoser.matching("attention_scores", [(request, _raises("RuntimeError", other_numbers))]) == []
    other_words = _raises("RuntimeError", "q and k do not fit together")
    assert diagnoser.matching("attention_scores", [(request, other_words)]) == []


def test_a_named_mistake_shows_a_request_as_its_evidence(corpus_cards):
    """The sentence ends with one request where the student's answer is the mistake's and not the reference's."""
    examples = [d.text.split("For example, ", 1)[1] for card in corpus_cards.values() for d in card.diagnoses
                if d.id != "unnamed" and "For example, `" in d.text]
    assert len(examples) > 40, f"only {len(examples)} diagnoses carry an example"
    for example in examples:
        assert re.match(r"`\w+\(.*\)`.* gives .*as with this mistake", example), example


def test_the_evidence_comes_from_visible_checks_only(tmp_path, server):
    """Two students with a course secret get different hidden inputs; the example quoted to each is the same,
    because it is taken from a visible check (the same inputs for everyone), never from a hidden one."""
    from grader import api

    secret = tmp_path / "course.secret"
    secret.write_text("a course secret of more than sixteen bytes\n")
    case = next(c for c in MUTANTS if c.id == "attention/mutants/softmax_dim0")
    path = case.write_submission(tmp_path)
    with api.Grader(case.assignment, course_secret_file=secret, server=server) as grader:
        assert grader.input_seed("alice") != grader.input_seed("bob")
        texts = [{d.exercise: d.text for d in grader.grade(path, student).diagnoses} for student in ("alice", "bob")]
    assert texts[0] == texts[1] and any("For example, `" in t for t in texts[0].values()), texts


def test_an_exercise_no_mistake_fits_says_what_broke_first_and_where(tmp_path, grade):
    """mha_proj_created_in_forward names no known mistake (its header says why); its card says which
    property broke first and the smallest input where the answers differ, once, above the exercise."""
    case = next(c for c in MUTANTS if c.id == "attention-modules/mutants/mha_proj_created_in_forward")
    card = grade(case.write_submission(tmp_path), case.assignment)
    unnamed = [d for d in card.diagnoses if d.id == "unnamed"]
    assert len(unnamed) == 1 and unnamed[0].exercise == "MultiHeadAttention", card.diagnoses
    assert re.search(r"the first property that broke is `test_\w+", unnamed[0].text)
    assert "The smallest input where your answer differs: `MultiHeadAttention(" in unnamed[0].text
    assert unnamed[0].checks and all(c.diagnosis is None for c in card.checks)


@pytest.mark.parametrize("case_id", ["attention/mutants/softmax_uses_torch_softmax",
                                     "attention/mutants/softmax_epsilon_in_exp"])
def test_nothing_is_said_where_no_answer_differs(corpus_cards, case_id):
    """A forbidden call with the right values, or weights within every tolerance: the check's own message says
    what it saw; no 'no known mistake fits' sentence is added."""
    assert corpus_cards[case_id].diagnoses == ()


def test_a_placeholder_is_told_by_its_gate_not_by_no_known_mistake(tmp_path, grade):
    """Code that computes nothing fails its exercise's gate, which says so; a 'no known mistake fits' sentence
    beside it would send the student hunting for a bug in code they have not written yet."""
    from tests.corpus_cases import corpus

    cases = [c for c in corpus("placeholders") if c.id in ("attention/placeholders/zeros", "attention/placeholders/ones")]
    assert len(cases) == 2
    for case in cases:
        card = grade(case.write_submission(tmp_path / case.id.rsplit("/", 1)[1]))
        gated = {c.exercise for c in card.checks if c.status == "failed" and "looks like a placeholder" in c.message}
        assert gated, f"{case.id}: the placeholder should fail at least one exercise's gate"
        said = [d.exercise for d in card.diagnoses if d.id == "unnamed" and d.exercise in gated]
        assert not said, (case.id, said)


def test_unnamed_sentences_follow_the_card_order(corpus_cards):
    """Exercise diagnoses read top to bottom like the card: never a later exercise's sentence first."""
    for case_id, card in corpus_cards.items():
        order = {}
        for c in card.checks:
            order.setdefault(c.exercise, len(order))
        unnamed = [order[d.exercise] for d in card.diagnoses if d.id == "unnamed"]
        assert unnamed == sorted(unnamed), (case_id, [d.exercise for d in card.diagnoses])


_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-9, 1e300, -1e300, float("inf"), float("-inf"), float("nan")])
_ENTRY = st.one_of(_SPECIAL, st.floats(-10, 10, allow_nan=False))


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(pairs=st.lists(st.tuples(_ENTRY, _ENTRY, st.sampled_from(["as drawn", "equal", "nudged"])), min_size=1, max_size=12),
       tolerance=st.sampled_from([(1e-4, 1e-5), (5e-3, 5e-3), (1e-7, 1e-9)]), equal_nan=st.booleans())
def test_outputs_agree_exactly_where_torch_isclose_says_so(pairs, tolerance, equal_nan):
    """Answers (diagnosis) and outputs (``expect_close``) are compared in NumPy (``helpers.all_close``); it must
    say what ``torch.isclose(...).all()`` says on every input, infinities, NaN and gaps at the edge of the
    tolerance included."""
    rtol, atol = tolerance
    xs, ys = [], []
    for x, y, how in pairs:
        xs.append(x)
        ys.append(x if how == "equal" else x + atol * 0.999 if how == "nudged" else y)
    x, y = torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)
    expected = bool(torch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan).all())
    assert all_close(x.numpy(), y.numpy(), rtol, atol, equal_nan) == expected
