"""How often the diagnosis names the right mistake: the project's mutants and alternatives.

Usage: python bench/diagnosis.py [--json FILE]

Grades every corpus mutant and correct alternative through one warm grader per
assignment, then compares the mistakes named on each card with the mutant's
``# diagnosis:`` header: a catalogue id, or ``none`` with the reason (a mistake
only the source shows, such as a forbidden call with the right values); a
mutant without the header counts as a miss. Prints right / ambiguous / wrong /
none for the mutants (target: right >= 90 %), and how many mutants declared
``none`` and alternatives got any diagnosis (target: 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.sandbox.client import WorkerServer  # noqa: E402
from tests.corpus_cases import corpus, diagnosis_outcome, expected_diagnosis, grade_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the per-case results here")
    parser.add_argument("--overhead", action="store_true",
                        help="instead: time grading the mutants with and without diagnosis, interleaved")
    args = parser.parse_args()
    if args.overhead:
        overhead()
        return
    cases = corpus("mutants") + corpus("alternatives")
    results: dict[str, dict] = {}
    started = time.monotonic()
    for case, card in grade_corpus(cases):
        expected = expected_diagnosis(case)
        kind = "alternatives" if case.kind == "alternatives" else (
            "mutants" if expected else "mutants without a catalogued mistake")
        named = sorted({m for c in card.checks if c.diagnosis for m in (c.diagnosis.id, *(a.id for a in c.diagnosis.also))})
        results[case.id] = {"kind": kind, "expected": expected, "named": named,
                            "outcome": diagnosis_outcome(card, expected)}
    elapsed = time.monotonic() - started
    for kind in ("mutants", "mutants without a catalogued mistake", "alternatives"):
        rows = {k: v for k, v in results.items() if v["kind"] == kind}
        if not rows:
            continue
        counts = Counter(v["outcome"] for v in rows.values())
        share = ", ".join(f"{o} {counts[o]} ({counts[o] / len(rows):.0%})" for o in ("right", "ambiguous", "wrong", "none"))
        print(f"{kind}: {len(rows)} cases: {share}")
        for case_id, v in sorted(rows.items()):
            if v["outcome"] != ("right" if kind == "mutants" else "none"):
                print(f"  {v['outcome']:9} {case_id}: expected {v['expected']}, named {v['named'] or 'nothing'}")
    print(f"graded {len(results)} cases in {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def overhead(rounds: int = 3) -> None:
    """Grade every mutant with diagnosis on and off (the judge built without its diagnoser), interleaved
    round by round on one warm server, and print the ratio of the totals."""
    from grader.session import session as checking

    with_diagnoser = checking.diagnoser_for
    cases = corpus("mutants")
    totals = {"on": 0.0, "off": 0.0}
    with WorkerServer() as server, tempfile.TemporaryDirectory() as tmp:
        paths = [(c.assignment, c.write_submission(Path(tmp))) for c in cases]
        for _ in range(rounds):
            for mode in ("off", "on"):
                checking.diagnoser_for = with_diagnoser if mode == "on" else (lambda assignment: None)
                for assignment in sorted({a for a, _ in paths}):
                    with api.Grader(assignment, server=server) as grader:
                        grader.grade(next(p for a, p in paths if a == assignment))  # warm-up, not timed
                        started = time.monotonic()
                        for _, path in (x for x in paths if x[0] == assignment):
                            grader.grade(path)
                        totals[mode] += time.monotonic() - started
    checking.diagnoser_for = with_diagnoser
    n = len(cases) * rounds
    print(f"{len(cases)} mutants x {rounds} rounds: diagnosis off {totals['off'] / n * 1000:.0f} ms a card, "
          f"on {totals['on'] / n * 1000:.0f} ms a card: ratio {totals['on'] / totals['off']:.2f}")


if __name__ == "__main__":
    main()
