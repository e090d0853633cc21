"""Credit only for work done: placeholder scores, and what the mutants keep.

Usage: python bench/credit.py [--save FILE] [--baseline FILE]

Grades every placeholder (``tests/corpus/*/placeholders``: files that return
constants, random values or their input, with the right shape, dtype and
device) and every mutant (one real bug each) through one warm grader per
assignment. Prints each placeholder's score as a share of its assignment's
points (target: at most 5 %), and the mutants' mean score. ``--save`` writes
every case's score to a JSON file; ``--baseline`` reads such a file (from an
earlier commit) and prints the mean before and after and the largest single
drop: the partial credit a student with one bug would lose.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus_cases import corpus, grade_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write {case id: [score, max_score]} here")
    parser.add_argument("--baseline", type=Path, help="a file written by --save at an earlier commit")
    args = parser.parse_args()
    scores: dict[str, list[float]] = {}
    for case, card in grade_corpus(corpus("placeholders") + corpus("mutants")):
        scores[case.id] = [card.score, card.max_score]
    print("placeholders (target: at most 5 % of the assignment's points)")
    for case_id, (score, max_score) in scores.items():
        if "/placeholders/" in case_id:
            print(f"  {case_id:55s} {score:7.2f} / {max_score:6.1f}  {100 * score / max_score:5.1f} %")
    mutants = {k: v for k, v in scores.items() if "/mutants/" in k}
    for assignment in sorted({k.split("/")[0] for k in mutants}):
        mine = {k: v for k, v in mutants.items() if k.startswith(assignment + "/")}
        mean = sum(s for s, _ in mine.values()) / len(mine)
        print(f"{assignment}: {len(mine)} mutants, mean score {mean:.2f} / {next(iter(mine.values()))[1]}")
    if args.baseline:
        _compare(json.loads(args.baseline.read_text()), mutants)
    if args.save:
        args.save.write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n")


def _compare(before: dict[str, list[float]], after: dict[str, list[float]]) -> None:
    """Mean before/after on the mutants both runs graded, and the largest drops (share of the max)."""
    common = sorted(set(before) & set(after))
    for assignment in sorted({k.split("/")[0] for k in common}):
        mine = [k for k in common if k.startswith(assignment + "/")]
        mb = sum(before[k][0] for k in mine) / len(mine)
        ma = sum(after[k][0] for k in mine) / len(mine)
        print(f"{assignment}: mean over {len(mine)} mutants before {mb:.2f} / {before[mine[0]][1]}, "
              f"after {ma:.2f} / {after[mine[0]][1]}")
    drops = sorted(((before[k][0] - after[k][0], k) for k in common), reverse=True)
    print("largest drops in points (score before -> after, of max before / after):")
    for drop, k in drops[:8]:
        print(f"  {k:60s} {before[k][0]:7.2f} -> {after[k][0]:7.2f}  of {before[k][1]:g} / {after[k][1]:g}  "
              f"(drop {drop:g})")

if __name__ == "__main__":
    main()
