"""Benchmark: when a ``grade-all`` writes its first card, its last card, its plots, and when it ends.

Usage: python bench/batch_timeline.py CLASS_FOLDER [--before TREE] [--rounds 3]

Why: a small class waits mostly for the start (the zygote's ``import torch``, the grader processes' own
start) and for the views at the end, not for the grades; the total alone does not say which moved.
Each round runs ``python -m grader.cli grade-all CLASS --assignment attention`` into a fresh ``--out``,
by ``TREE`` (another checkout, ``git worktree add /tmp/before <commit>``) when given and then by this
tree, and reads the times from the files it wrote: the first and the last ``cards/*.json``, the newest
``cohort/*.png``, and the command's exit, each in seconds from its start. Medians per tree at the end.

Class folders: ``bench/nbgrader_compare.py``'s twenty (``make_class(folder, pick_cases(20))`` there) or
``bench/class_throughput.py``'s ``make_class(folder, n)``. No assertion: the machine is noisy, so only
trees measured in the same rounds are compared.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKS = ("first card", "last card", "plots", "end")


def run(tree: Path, folder: Path) -> dict[str, float]:
    """One ``grade-all`` by ``tree``'s grader: each mark in seconds from the command's start."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out"
        started = time.time()
        subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(folder), "--assignment", "attention",
                        "--out", str(out)], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        ended = time.time()
        cards = sorted(p.stat().st_mtime for p in (out / "cards").glob("*.json"))
        plots = sorted(p.stat().st_mtime for p in (out / "cohort").glob("*.png"))
        if not cards:
            raise SystemExit(f"{tree}: grade-all wrote no card")
        return {"first card": cards[0] - started, "last card": cards[-1] - started,
                "plots": (plots[-1] if plots else ended) - started, "end": ended - started}


def line(label: str, marks: dict[str, float]) -> str:
    return f"{label:8s} " + "  ".join(f"{m} {marks[m]:5.2f} s" for m in MARKS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = ([("before", args.before.resolve())] if args.before else []) + [("now", ROOT)]
    seen: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    for n in range(args.rounds):
        for label, tree in trees:
            seen[label].append(run(tree, args.folder.resolve()))
            print(f"round {n + 1} " + line(label, seen[label][-1]), flush=True)
    print(f"\nmedians of {args.rounds} rounds, {len(list(args.folder.iterdir()))} submissions")
    for label, runs in seen.items():
        print(line(label, {m: statistics.median(r[m] for r in runs) for m in MARKS}))


if __name__ == "__main__":
    main()
