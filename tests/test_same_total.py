"""Every card of an assignment lists the same checks with the same points possible, whatever the file.

A file that cannot run, a stub, a crash at import, a NaN-producing mutant and a correct file are
graded through one warm grader; their cards must agree on (exercise, id, max_score) row by row and on
the total. Only GPU-only checks may be skipped (where this machine has no CUDA), alike on every card.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

import pytest

from grader import api, scoring
from grader import session
from grader.config import load_config
from grader.export import gradebook_csv, text
from grader.export.gradebook import row_from_card
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests.corpus_cases import corpus

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions/attention.py").read_text()
NAN_MUTANT = "causal_mask_diagonal_masked"  # row 0 has nothing to attend to: NaN in attention's outputs

FILES: dict[str, bytes] = {
    "correct": REFERENCE.encode(),
    "stub": (ROOT / "exercises/attention.py").read_bytes(),
    "syntax_error": b"def attention_scores(q, k:\n    return q\n",
    "not_utf8": b'x = "caf\xe9 \xff"\n',
    "empty": b"",
    "import_crash": (REFERENCE + "\nraise RuntimeError('boom at import')\n").encode(),
}


@pytest.fixture(scope="module")
def cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Scorecard]]:
    """Each kind of file graded once, through one warm grader (the judge's collection is shared)."""
    folder = tmp_path_factory.mktemp("same-total")
    paths = {}
    for name, data in FILES.items():
        path = folder / name / "attention.py"
        path.parent.mkdir()
        path.write_bytes(data)
        paths[name] = path
    case = next(c for c in corpus("mutants") if c.path.stem == NAN_MUTANT)
    paths["nan_mutant"] = case.write_submission(folder / "corpus")
    with api.Grader("attention", server=server) as grader:
        yield {name: grader.grade(path) for name, path in paths.items()}


def rows(card: Scorecard) -> list[tuple[str, str, float]]:
    return [(c.exercise, c.id, c.max_score) for c in card.checks]


@pytest.mark.parametrize("name", [n for n in [*FILES, "nan_mutant"] if n != "correct"])
def test_every_card_lists_the_same_checks_and_total(cards, name):
    correct, card = cards["correct"], cards[name]
    assert correct.score == correct.max_score  # the reference earns every point it can
    assert rows(card) == rows(correct)
    assert card.max_score == correct.max_score
    assert len({(c.exercise, c.id) for c in card.checks}) == len(card.checks)


def test_a_property_that_cannot_be_judged_fails_with_the_reason(cards):
    card = cards["nan_mutant"]
    unjudged = [c for c in card.checks if "could not be judged" in c.message]
    assert unjudged, "the NaN mutant should leave some property unjudged"
    for c in unjudged:
        assert (c.status, c.score) == ("failed", 0.0) and c.max_score > 0
        assert "NaN" in c.message and "test_output_matches_reference" in c.message


@pytest.mark.parametrize("name", [*FILES, "nan_mutant"])
def test_only_gpu_checks_are_skipped(cards, name):
    assignment = load_config().assignment("attention")
    card = cards[name]
    skipped = [c for c in card.checks if c.status == "skipped"]
    assert all(assignment.check(c.exercise, c.id.split("[", 1)[0]).requires_cuda for c in skipped)
    if not card.environment["cuda"]:
        assert skipped and "no CUDA device" in card.environment["not_checked"]


def test_the_gpu_note_is_said_once_in_the_text(cards):
    card = cards["correct"]
    if card.environment["cuda"]:
        pytest.skip("this machine has CUDA: nothing is left out")
    out = text.render(card)
    assignment = load_config().assignment("attention")
    gpu_only = [(e.name, c.name) for e in assignment.exercises for c in e.checks if c.requires_cuda]
    assert gpu_only, "the assignment should have a GPU-only check for this test to mean something"
    assert out.count("no CUDA device") == 1 and f"NOT CHECKED ({len(gpu_only)})" in out


def test_the_file_problem_is_said_once(cards):
    for name, words in (("syntax_error", "syntax error at line 1"), ("not_utf8", "not UTF-8"),
                        ("empty", "the file is empty"), ("import_crash", "boom at import")):
        card = cards[name]
        assert card.problem and words in card.problem
        assert text.render(card).count(words) == 1, name
        assert all(words not in c.message for c in card.checks)


def test_every_zero_in_the_gradebook_has_a_reason(cards, tmp_path):
    rows_ = [row_from_card(name, card, f"{name}/attention.py", "") for name, card in cards.items()]
    zeros = [r for r in rows_ if r.score == 0]
    assert len(zeros) == 5  # stub, syntax error, not UTF-8, empty, crash at import
    assert all(r.message for r in zeros)
    assert next(r for r in zeros if r.student == "syntax_error").message.startswith("syntax error at line 1")
    assert next(r for r in zeros if r.student == "import_crash").message.startswith("could not load: RuntimeError")
    assert next(r for r in zeros if r.student == "stub").message.startswith("not attempted")
    assert all(not r.message for r in rows_ if r.score)
    path = tmp_path / "gradebook.csv"
    gradebook_csv.write(rows_, [ex.name for ex in load_config().assignment("attention").exercises], path)
    with path.open(newline="", encoding="utf-8") as fh:
        written = list(csv.DictReader(fh))
    assert all(r["message"] for r in written if r["score"] == "0")


def test_the_class_page_shows_why_a_zero(cards, tmp_path):
    from grader import scorecard
    from grader.batch import cohort, summary

    paths, rows_ = {}, []
    for name in ("syntax_error", "stub", "import_crash"):
        paths[name] = tmp_path / f"{name}.json"
        scorecard.write(cards[name], paths[name])
        rows_.append(row_from_card(name, cards[name], f"{name}/attention.py", paths[name].name))
    page = cohort.index_html(summary.summarise("attention", rows_, paths), rows_, set(), {}, None)
    for reason in ("syntax error at line 1", "not attempted: every function", "could not load: RuntimeError"):
        assert reason in page


def test_problem_results_splits_points_as_the_collected_checks_do():
    """Unit: without a grading, the rows follow the collected ids (points split per parameter)."""
    assignment = load_config().assignment("attention")
    collected = [session.CollectedCheck("test_low_precision_inputs_work", f"test_low_precision_inputs_work[softmax-{d}]",
                                         "softmax") for d in ("float16", "bfloat16")]
    got = scoring.problem_results(assignment, "x", cuda=False, collected=collected)
    low = [c for c in got if c.exercise == "softmax" and c.id.startswith("test_low_precision")]
    assert [(c.id, c.max_score) for c in low] == [(c.check_id, 0.5) for c in collected]
    configured = sum(c.points for ex in assignment.exercises for c in ex.checks if not c.requires_cuda)
    assert sum(c.max_score for c in got) == pytest.approx(configured)
