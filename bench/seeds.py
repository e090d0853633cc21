"""Benchmark: do the checks hold for every student's hidden inputs (``grader.seeds``)?

Usage: python bench/seeds.py [--seeds 100] [--first 0]

Each student's hidden checks draw their inputs from a seed of their own. For
each of ``--seeds`` seeds (derived like a student's, from a bench secret and
"student-<i>"), this grades the reference solution and every corpus mutant
(tests/corpus/*/mutants) of both assignments with that seed, and prints one
line per seed: whether the reference gets full marks, and how many mutants
lose points in their own exercise (their ``# exercise:`` header), i.e. the
catch rate for a student with that seed; then the mutants a seed let through.
The last lines summarise: seeds where the reference lost points, and the catch
rate's minimum, mean and maximum over the seeds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import api, seeds  # noqa: E402
from grader.sandbox.client import WorkerServer  # noqa: E402
from tests.corpus_cases import FILENAME, REFERENCE, corpus  # noqa: E402

BENCH_SECRET = b"bench/seeds.py: not a course secret"


def exercise_lost(card, exercise: str) -> bool:
    """Whether the card has fewer points than possible in ``exercise``."""
    rows = [c for c in card.checks if c.exercise == exercise]
    return sum(c.score for c in rows) < sum(c.max_score for c in rows) - 1e-9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=100, help="how many seeds (students) to try")
    parser.add_argument("--first", type=int, default=0, help="the first student number")
    args = parser.parse_args()
    student_seeds = [seeds.derive(BENCH_SECRET, "bench", f"student-{i}")
                     for i in range(args.first, args.first + args.seeds)]
    mutants = [c for c in corpus("mutants") if c.header.get("exercise")]
    assignments = sorted({c.assignment for c in mutants} | set(REFERENCE))
    results: dict[int, tuple[bool, list[str]]] = {}
    with WorkerServer() as server, tempfile.TemporaryDirectory(prefix="bench-seeds-") as tmp:
        folder = Path(tmp)
        graders = {a: api.Grader(a, server=server) for a in assignments}
        try:
            files = {c.id: c.write_submission(folder / c.assignment) for c in mutants}
            refs = {}
            for a in assignments:
                refs[a] = folder / a / "reference" / FILENAME[a]
                refs[a].parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(REFERENCE[a], refs[a])
            print(f"{len(mutants)} mutants, assignments {', '.join(assignments)}", flush=True)
            for i, seed in enumerate(student_seeds):
                started = time.perf_counter()
                full = True
                for a in assignments:
                    card = graders[a].grade(refs[a], seed=seed)
                    full &= card.score == card.max_score and not card.grader_error
                missed = [c.id for c in mutants
                          if not exercise_lost(graders[c.assignment].grade(files[c.id], seed=seed), c.header["exercise"])]
                results[seed] = (full, missed)
                caught = len(mutants) - len(missed)
                print(f"seed {args.first + i:3d} ({seed:10d}): reference full marks {'yes' if full else 'NO '}; "
                      f"mutants caught {caught}/{len(mutants)} ({caught / len(mutants):.1%})"
                      f"{'; missed: ' + ', '.join(missed) if missed else ''} [{time.perf_counter() - started:.1f} s]",
                      flush=True)
        finally:
            for g in graders.values():
                g.close()
    rates = [(len(mutants) - len(m)) / len(mutants) for _, m in results.values()]
    not_full = [s for s, (full, _) in results.items() if not full]
    print(f"seeds run: {len(results)}; reference full marks on {len(results) - len(not_full)}"
          + (f"; NOT on {not_full}" if not_full else ""))
    if rates:
        print(f"catch rate per seed: min {min(rates):.1%}, mean {statistics.mean(rates):.1%}, max {max(rates):.1%}")


if __name__ == "__main__":
    main()
