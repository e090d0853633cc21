"""The similarity report's pair matrix against copydetect's own pair-by-pair comparison, in one run.

Usage: python bench/similarity.py [STUDENTS]

Builds a class of STUDENTS (default 300) near-identical files from the attention corpus (the worst
case: almost every pair is listed), times ``similarity.compare`` over all pairs, and times
copydetect's ``compare_files`` on a sample of the same pairs, scaled to all of them. Prints both and
their ratio.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.batch import similarity  # noqa: E402
from tests.corpus_cases import corpus  # noqa: E402

SAMPLE_PAIRS = 2000


def main() -> None:
    from copydetect import compare_files

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    base = [similarity.tokens(c.source()) for c in corpus("mutants") + corpus("alternatives") if c.assignment == "attention"]
    texts = {f"s{i:03d}": base[i % len(base)] + "V=V" * (i // len(base)) for i in range(n)}
    stub = similarity.tokens((ROOT / "exercises/attention.py").read_text())
    pairs_total = n * (n - 1) // 2
    started = time.perf_counter()
    pairs, _ = similarity.compare(texts, stub)
    ours = time.perf_counter() - started
    prints, _ = similarity._fingerprints(texts, stub, similarity.NOISE)
    names = list(prints)
    sample = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))][:SAMPLE_PAIRS]
    started = time.perf_counter()
    for a, b in sample:
        compare_files(prints[a].fingerprint, prints[b].fingerprint)
    theirs = (time.perf_counter() - started) / len(sample) * pairs_total
    print(f"{n} students, {pairs_total} pairs ({len(pairs)} listed): pair matrix {ours:.2f} s, "
          f"compare_files pair by pair {theirs:.1f} s (from {len(sample)} pairs): ratio {theirs / ours:.0f}x")


if __name__ == "__main__":
    main()
