"""Write the project's whole test corpus as a class folder per assignment, one student per case.

Usage: python bench/corpus_class.py DIR
Then: grader grade-all DIR/attention --assignment attention --out OUT
Each case becomes ``DIR/<assignment>/<kind>-<case>/<file>`` (alternatives, mutants, hostile), written
as a student would hand it in (bytes kept for hostile cases), so a batch over it must end every case
as a card or an error row.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus_cases import corpus  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    counts: dict[str, int] = {}
    for kind in ("alternatives", "mutants", "hostile"):
        for case in corpus(kind):
            folder = out / case.assignment
            written = case.write_submission(folder / "_staging")
            student = folder / f"{kind}-{case.path.stem}"
            student.mkdir(parents=True, exist_ok=True)
            written.rename(student / written.name)
            written.parent.rmdir()
            counts[case.assignment] = counts.get(case.assignment, 0) + 1
    for assignment in counts:
        (out / assignment / "_staging").rmdir()
    print(", ".join(f"{a}: {n} students" for a, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
