"""How often the diagnosis names the mistake, on the project's corpus and on a held-out one.

Usage: python bench/diagnosis.py [--json FILE] [--corpus project unseen fresh kept blind]
       python bench/diagnosis.py --overhead [--rounds 3]

Five corpora, graded through one warm grader per assignment:

* ``project``: ``tests/corpus/*/mutants`` (one bug each, a ``# diagnosis:`` header naming its catalogue
  entry or ``none (why)``) and ``alternatives`` (correct files written other ways);
* ``unseen``: ``tests/corpus_unseen/attention/*.py``, single-bug and correct files written as students
  write them, kept apart from the operators' own tests and never used to tune them. Each header gives
  the ``exercise`` with the bug (``none`` for a correct file) and an ``accept`` regex that a right name's
  sentence matches (hand-checked labels);
* ``fresh``: ``tests/corpus_fresh/*/*.py``, the same format for both assignments, written from public
  sources by someone who had not read ``grader/`` (its README), labels committed before any grading.
* ``kept``: ``tests/corpus_kept/*/*.py``, a second batch in the same format, kept from the team: written
  by an outsider to ``grader/``, labels committed before any grading (its README).
* ``blind``: ``tests/corpus_blind/*/*.py``, a third batch in the same format, kept from the team and
  written the same way by another outsider, labels committed before any grading (its README).

Per corpus it prints, over the single-bug files: the share **named in the right exercise** (a mistake
named whose own exercise is the labelled one and, in ``unseen``, whose sentence matches ``accept``;
in ``project``, the catalogued id itself or a generated variant of the same exercise), the share
**named wrongly** among the named files, and the share of **correct files named** (must be 0).
Targets (issue 25): >= 80 % named on ``unseen``, >= 90 % on ``project``, wrong <= 2 % of named, 0 on
correct files.

``--overhead`` grades the project's mutants with diagnosis on and off (the judge built without its
diagnoser), interleaved round by round on one warm server, and prints the median ratio per round.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.diagnosis.catalogue import load_catalogue  # noqa: E402
from grader.diagnosis.family import variants  # noqa: E402
from grader.diagnosis.observed import exercise_of  # noqa: E402
from grader.sandbox.client import WorkerServer  # noqa: E402
from grader.scorecard import Scorecard  # noqa: E402
from grader.scoring import UNNAMED_ID  # noqa: E402
from tests.corpus_cases import REFERENCE, corpus, expected_diagnosis, grade_corpus  # noqa: E402

HELD_OUT = {"unseen": ROOT / "tests" / "corpus_unseen", "fresh": ROOT / "tests" / "corpus_fresh", "kept": ROOT / "tests" / "corpus_kept",
            "blind": ROOT / "tests" / "corpus_blind"}


@dataclass(frozen=True)
class Labelled:
    """One file with its hand-checked label: the exercise with the bug ('' for a correct file)."""

    corpus: str
    id: str
    exercise: str
    accept: str  # a regex a right name's sentence matches; '' = the exercise alone decides
    expected_id: str = ""  # project mutants: the catalogued id


def mistake_exercises() -> dict[str, str]:
    """Every known mistake's id -> the exercise it sits in: the catalogue's and the generated family's."""
    found: dict[str, str] = {}
    for assignment, reference in REFERENCE.items():
        found.update({m.id: m.exercise for m in load_catalogue(assignment)})
        found.update({v.id: v.exercise for v in variants(reference.read_text(encoding="utf-8"), assignment)})
    return found


def relation_exercise(mistake_id: str) -> str:
    """A relation read from the answers (``relation-<exercise>-<kind>-...``) -> its exercise; '' for another id."""
    parts = mistake_id.split("-")
    return parts[1] if parts[0] == "relation" and len(parts) > 2 else ""


def outcome(card: Scorecard, label: Labelled, exercises: dict[str, str]) -> str:
    """``right`` / ``wrong`` / ``none`` for a single-bug file; ``named`` / ``none`` for a correct one."""
    named = [d for d in card.diagnoses if d.id != UNNAMED_ID]
    if not label.exercise:
        return "named" if named else "none"
    if not named:
        return "none"
    if label.expected_id and any(d.id == label.expected_id or label.expected_id in {a.id for a in d.also} for d in named):
        return "right"
    right = [d for d in named if (exercises.get(d.id) or relation_exercise(d.id) or exercise_of(d.id)) == label.exercise
             and (not label.accept or re.search(label.accept, d.text, re.IGNORECASE))]
    return "right" if right else "wrong"


def project_cases() -> Iterator[tuple[Labelled, object]]:
    for case in corpus("mutants") + corpus("alternatives"):
        expected = expected_diagnosis(case)
        if case.kind == "mutants" and not expected:
            continue  # a mistake only the source shows (the header says why): no name is owed
        exercise = case.header.get("exercise", "") if case.kind == "mutants" else ""
        yield Labelled("project", case.id, exercise, "", expected or ""), case


def held_out_labels(name: str) -> list[tuple[Labelled, str]]:
    """Each held-out file's label and its whole source: a bug file holds only its buggy definition, appended to
    the correct file its ``# base:`` header names (a later definition replaces the earlier one). A folder is an
    assignment, its id written with ``_`` or ``-`` (``attention_modules`` is ``attention-modules``)."""
    found = []
    for path in sorted(HELD_OUT[name].glob("*/*.py")):
        text = path.read_text(encoding="utf-8")
        header = dict(re.findall(r"^# (source|exercise|accept|why|base): (.*)$", text, re.M))
        exercise = header.get("exercise", "").strip()
        accept = header.get("accept", "").strip()
        base = header.get("base", "").strip()
        source = (path.with_name(f"{base}.py").read_text(encoding="utf-8") + "\n\n" + text) if base else text
        assignment = path.parent.name.replace("_", "-")
        found.append((Labelled(name, f"{assignment}/{path.stem}", "" if exercise == "none" else exercise,
                               "" if accept == "-" else accept), source))
    return found


def grade_unseen(labels: list[tuple[Labelled, str]]) -> Iterator[tuple[Labelled, Scorecard]]:
    with WorkerServer() as server, tempfile.TemporaryDirectory() as tmp:
        by_assignment: dict[str, list[tuple[Labelled, str]]] = {}
        for label, source in labels:
            by_assignment.setdefault(label.id.split("/")[0], []).append((label, source))
        for assignment, items in by_assignment.items():
            with api.Grader(assignment, server=server) as grader:
                for label, source in items:
                    path = Path(tmp) / f"{label.id.split('/')[1]}.py"
                    path.write_text(source, encoding="utf-8")
                    yield label, grader.grade(path)


def report(name: str, rows: list[tuple[Labelled, str]]) -> dict:
    bugs = [(label, o) for label, o in rows if label.exercise]
    correct = [(label, o) for label, o in rows if not label.exercise]
    right = sum(o == "right" for _, o in bugs)
    wrong = sum(o == "wrong" for _, o in bugs)
    named = right + wrong
    correct_named = sum(o == "named" for _, o in correct)
    print(f"{name}: {len(bugs)} single-bug files: named in the right exercise {right} ({right / max(len(bugs), 1):.0%}), "
          f"named wrongly {wrong} ({wrong / max(named, 1):.1%} of the {named} named), nothing named "
          f"{len(bugs) - named}; correct files {len(correct)}: named {correct_named}")
    for label, o in rows:
        if (label.exercise and o != "right") or (not label.exercise and o != "none"):
            print(f"  {o:6} {label.id} (bug in {label.exercise or 'nothing'})")
    return {"files": len(bugs), "right": right, "wrong": wrong, "correct": len(correct), "correct_named": correct_named}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the per-file results here")
    parser.add_argument("--corpus", nargs="+", default=["project", "unseen"], choices=["project", *HELD_OUT])
    parser.add_argument("--overhead", action="store_true",
                        help="instead: time grading the mutants with and without diagnosis, interleaved")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--catalogue-only", action="store_true",
                        help="diagnose with the hand-written catalogue alone, as before the operators (the baseline)")
    args = parser.parse_args()
    if args.catalogue_only:
        catalogue_only()
    if args.overhead:
        overhead(args.rounds)
        return
    exercises = mistake_exercises()
    results: dict[str, dict] = {}
    started = time.monotonic()
    if "project" in args.corpus:
        labelled = dict((case.id, label) for label, case in project_cases())
        cases = [c for c in corpus("mutants") + corpus("alternatives") if c.id in labelled]
        rows = [(labelled[case.id], outcome(card, labelled[case.id], exercises)) for case, card in grade_corpus(cases)]
        results["project"] = {"summary": report("project corpus", rows), "files": {l.id: o for l, o in rows}}
    for name in [c for c in args.corpus if c in HELD_OUT]:
        rows = [(label, outcome(card, label, exercises)) for label, card in grade_unseen(held_out_labels(name))]
        results[name] = {"summary": report(f"{name} corpus", rows), "files": {l.id: o for l, o in rows}}
    print(f"graded in {time.monotonic() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def catalogue_only() -> None:
    """Judges built from here on diagnose with the catalogue alone (no generated variants)."""
    from grader.diagnosis.diagnose import Diagnoser
    from grader.session import session as checking

    def without_operators(assignment):  # noqa: ANN001, ANN202 - session.diagnoser_for's shape
        if assignment.reference is None:
            return None
        return Diagnoser(assignment.reference, load_catalogue(assignment.id), assignment=assignment.id)
    checking.diagnoser_for = without_operators


def overhead(rounds: int = 3) -> None:
    """Grade every mutant with diagnosis on and off (the judge built without its diagnoser), interleaved
    round by round on one warm server; print each round's ratio of the totals and their median."""
    from grader.session import session as checking

    with_diagnoser = checking.diagnoser_for
    cases = corpus("mutants")
    ratios, per_card = [], {"on": [], "off": []}
    with WorkerServer() as server, tempfile.TemporaryDirectory() as tmp:
        paths = [(c.assignment, c.write_submission(Path(tmp))) for c in cases]
        for _ in range(rounds):
            totals = {"on": 0.0, "off": 0.0}
            for mode in ("off", "on"):
                checking.diagnoser_for = with_diagnoser if mode == "on" else (lambda assignment: None)
                for assignment in sorted({a for a, _ in paths}):
                    with api.Grader(assignment, server=server) as grader:
                        grader.grade(next(p for a, p in paths if a == assignment))  # warm-up, not timed
                        started = time.monotonic()
                        for _, path in (x for x in paths if x[0] == assignment):
                            grader.grade(path)
                        totals[mode] += time.monotonic() - started
            ratios.append(totals["on"] / totals["off"])
            for mode in totals:
                per_card[mode].append(totals[mode] / len(cases) * 1000)
    checking.diagnoser_for = with_diagnoser
    print(f"{len(cases)} mutants x {rounds} rounds: diagnosis off {statistics.median(per_card['off']):.0f} ms a card, "
          f"on {statistics.median(per_card['on']):.0f} ms a card; ratio per round "
          f"{', '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
