"""Each thing a report says is said once, and right.

A known mistake is explained once per exercise, above its failed checks (text, HTML, the student
view); a figure's hint names only causes the card's failed checks point at; forgetting the scale
gets a hint as precise as dividing by head_size; the kit speaks of "this machine".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from grader import api
from grader.export import views
from grader.export import gradescope, html, text
from grader.export.html import entropy_hint
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests.corpus_cases import corpus

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ("softmax_dim0", "scale_scores_no_scaling", "attention_mask_after_softmax")


@pytest.fixture(scope="module")
def cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Scorecard]]:
    folder = tmp_path_factory.mktemp("said-once")
    cases = {c.path.stem: c for c in corpus("mutants") if c.path.stem in MUTANTS}
    with api.Grader("attention", server=server) as grader:
        yield {name: grader.grade(cases[name].write_submission(folder)) for name in MUTANTS}


def _flat(out: str) -> str:
    """Wrapped lines joined again, so a sentence can be counted however it was wrapped."""
    return " ".join(out.split())


def _plain(page: str) -> str:
    """An HTML page's text, entities read back, so a sentence can be counted. A `span` in backticks is drawn
    as code: read back with its backticks, as the card's text has it."""
    import html as std

    page = re.sub(r"<code>(.*?)</code>", r"`\1`", page)
    return std.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.mark.parametrize("name", ["softmax_dim0", "scale_scores_no_scaling"])
def test_a_diagnosis_is_said_once_per_exercise(cards, name):
    card = cards[name]
    assert card.diagnoses, "the mutant should be diagnosed"
    for named in card.diagnoses:
        assert len(named.checks) > 1  # the case the rule is for: one mistake failing several checks
        copies = sum(d.text == named.text for d in card.diagnoses)  # the same mistake may show in several exercises
        assert _flat(text.render(card)).count(named.text) == copies
        assert _flat(_plain(html.render(card, view="instructor"))).count(named.text) == copies
        student = views.student_view(card)
        shown = sum(d.text == named.text for d in student.diagnoses)
        assert _flat(_plain(html.render(card, view="student"))).count(named.text) == shown
        assert all(named.text not in c.message for c in card.checks)


def test_the_diagnosed_checks_refer_to_the_diagnosis(cards):
    card = cards["softmax_dim0"]
    out = text.render(card)
    diagnosed = sum(c.diagnosis is not None for c in card.checks)
    assert _flat(out).count(text.SEE_DIAGNOSIS) == diagnosed  # the text view wraps lines: one may split the phrase
    named = {(d.exercise, i) for d in card.diagnoses for i in d.checks}
    assert named == {(c.exercise, c.id) for c in card.checks if c.diagnosis is not None}


def test_the_student_view_drops_a_mistake_only_hidden_checks_show(cards):
    card = cards["softmax_dim0"]
    student = views.student_view(card)
    visible = {(c.exercise, c.id) for c in card.checks if not views.is_hidden(c)}
    for d in student.diagnoses:
        assert d.checks and all((d.exercise, i) in visible for i in d.checks)


def test_gradescope_explains_each_mistake_once_at_the_top(cards):
    card = cards["softmax_dim0"]
    results = gradescope.results(card)
    shown = views.student_view(card).diagnoses
    for d in shown:
        assert results["output"].count(d.text) == sum(x.text == d.text for x in shown)
        assert all(d.text not in t["output"] for t in results["tests"])


def test_forgetting_the_scale_is_named_as_precisely_as_dividing_by_head_size(cards):
    card = cards["scale_scores_no_scaling"]
    named = next(d for d in card.diagnoses if d.exercise == "scale_scores")
    assert named.id == "scale_scores_no_scaling"
    assert "unscaled scores" in named.text and "sqrt(head_size)" in named.text
    check = next(c for c in card.checks if c.id == "test_scale_divides_by_sqrt_head_size")
    assert "unscaled" in check.message and "sqrt(head_size)" in check.message


def test_the_entropy_hint_names_only_what_failed(cards):
    card = cards["attention_mask_after_softmax"]
    failed = html.failed_exercises(card)
    assert "attention" in failed and "split_heads" not in failed
    figure = (card.figures or {}).get("head_entropy")
    assert isinstance(figure, dict) and "error" not in figure
    page = _plain(html.render(card, view="student"))
    verdict = page[page.index("Entropy per head"):]
    verdict = verdict[verdict.index("Your heads' weights"):][:600]
    assert "split" not in verdict and "order inside" in verdict


@pytest.mark.parametrize("failed, named, not_named", [
    ({"split_heads"}, "split into heads", "softmax"),
    ({"attention"}, "never a mask after the softmax", "split"),
    ({"scale_scores", "multi_head_attention"}, "√d_head", "split"),
    (set(), "passed", "split"),
])
def test_entropy_hint_follows_the_failed_exercises(failed, named, not_named):
    hint = entropy_hint(failed)
    assert named in hint and not_named not in hint


def test_what_a_student_reads_on_their_machine_says_this_machine():
    """The kit, `grader check` and the skipped checks run on a student's laptop: never "the grading machine"."""
    places = [ROOT / "grader/selfcheck.py", ROOT / "grader/scoring.py", *sorted((ROOT / "grader/session").glob("*.py")),
              ROOT / "grader/checks/helpers.py", ROOT / "grader/export/text.py",
              ROOT / "grader/export/templates/report.html.j2", *sorted((ROOT / "grader/release").rglob("*"))]
    said = [p for p in places if p.is_file() and "grading machine" in p.read_text(errors="replace")]
    assert not said, said
