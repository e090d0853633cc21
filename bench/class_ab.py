"""Benchmark: ``grade-all`` of one class by two versions of the grader, alternately, beside ``import torch``.

Usage: python bench/class_ab.py CLASS_FOLDER --before TREE [--rounds 2]

``TREE`` is another checkout of this project (``git worktree add /tmp/before <commit>``); ``CLASS_FOLDER`` a
folder of submissions (``class_throughput.make_class`` writes one). Each round runs ``grade-all`` by the other
tree, then by this one, each into a fresh ``--out``, with a bare ``python -c "import torch"`` timed before,
between and after, and prints each run's wall time, its own process's CPU and its grader processes' (every
descendant reaped); at the end, the medians over the rounds, each tree's against all the ``import torch``
samples' median.
A change's effect on a whole class, measured on the same noisy machine in the same minutes; no assertion.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = """
import resource, sys, time
sys.path.insert(0, {tree!r})
sys.argv = ["grader", "grade-all", "--assignment", "attention", "--out", {out!r}, {folder!r}]
import grader.cli
wall, cpu = time.time(), time.process_time()
try:
    grader.cli.main()
except SystemExit:
    pass
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print("RESULT", time.time() - wall, time.process_time() - cpu, children.ru_utime + children.ru_stime, file=sys.stderr)
"""


def grade_all(tree: Path, folder: Path, out: Path) -> tuple[float, float, float]:
    """(wall, the batch's own CPU, its descendants' CPU) of one ``grade-all`` by ``tree``'s grader."""
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run([sys.executable, "-c", RUN.format(tree=str(tree), out=str(out), folder=str(folder))],
                          cwd=tree, capture_output=True, text=True, check=False)
    found = [line.split()[1:] for line in done.stderr.splitlines() if line.startswith("RESULT")]
    if not found:
        sys.exit(f"grade-all by {tree} did not finish:\n{done.stderr[-2000:]}")
    wall, own, children = (float(x) for x in found[-1])
    return wall, own, children


def import_torch() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {"before": [], "now": []}
    torches: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            # ``import torch`` before, between and after the two runs: on a shared machine one sample moves the
            # ratio as much as a change does; the round's median is its yardstick.
            samples = [import_torch()]
            before = grade_all(args.before.resolve(), args.folder.resolve(), Path(tmp) / "before")
            samples.append(import_torch())
            now = grade_all(ROOT, args.folder.resolve(), Path(tmp) / "now")
            samples.append(import_torch())
            torch_s = statistics.median(samples)
            torches += samples
            walls["before"].append(before[0])
            walls["now"].append(now[0])
            print(f"round {r + 1}: import torch {torch_s:.2f} s (median of {', '.join(f'{x:.2f}' for x in samples)}) | "
                  f"before: wall {before[0]:.1f} s, own CPU {before[1]:.2f} s, grader processes {before[2]:.1f} s | "
                  f"now: wall {now[0]:.1f} s ({now[0] / torch_s:.1f}x import torch), own CPU {now[1]:.2f} s, "
                  f"grader processes {now[2]:.1f} s", flush=True)
    torch_median = statistics.median(torches)
    print(f"medians of {args.rounds} rounds: import torch {torch_median:.2f} s ({len(torches)} samples); "
          + "; ".join(f"{label} {statistics.median(w):.1f} s ({statistics.median(w) / torch_median:.1f}x)"
                      for label, w in walls.items()))


if __name__ == "__main__":
    main()
