"""Benchmark: the judge's and the sandboxed child's CPU a grade, on a judge's first sight of each file and again.

Usage: python bench/two_pass.py [--before TREE] [--rounds 3] [--passes 2]

Each round grades every attention alternative and mutant of the project's corpus (92 files) through one warm
``api.Grader`` pinned to one core, ``--passes`` times over: the first pass is what a grader process of
``grade-all`` pays as it meets each kind of mistake (diagnosis replays every candidate mistake once, then
remembers its answers), the later ones what it pays once it has. With ``--before`` (another checkout, ``git
worktree add /tmp/before <commit>``) each round grades by that tree first, then by this one, each in a fresh
interpreter that imports the batch's zygote first (torch, sympy), as a grader process has. Prints the judge
process's CPU and the children's (from /proc, before each is killed) per grade and pass. No assertion.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = """
import os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, {tree!r})  # its grader and its corpus
import grader.batch.zygote  # what a grader process starts from
from grader import api
from grader.sandbox import client
from tests.corpus_cases import corpus

children = [0.0]
kill = client.SubmissionWorker._kill

def measured_kill(self, child):
    children[0] += client._cpu_seconds(child.pid)
    return kill(self, child)

client.SubmissionWorker._kill = measured_kill
os.sched_setaffinity(0, {{0}})
cases = [c for kind in ("alternatives", "mutants") for c in corpus(kind) if c.assignment == "attention"]
with tempfile.TemporaryDirectory() as tmp:
    paths = []
    for i, case in enumerate(cases):
        folder = Path(tmp) / str(i)
        folder.mkdir()
        paths.append(case.write_submission(folder))
    with api.Grader("attention") as grader:
        for p in range({passes}):
            children[0] = 0.0
            started = time.process_time()
            for path in paths:
                grader.grade(path)
            judge = time.process_time() - started
            print("PASS", p, judge / len(paths), children[0] / len(paths), len(paths))
"""


def run(tree: Path, passes: int) -> list[tuple[float, float, int]]:
    done = subprocess.run([sys.executable, "-c", RUN.format(tree=str(tree), passes=passes)],
                          cwd=tree, capture_output=True, text=True, check=False)
    found = [line.split()[2:] for line in done.stdout.splitlines() if line.startswith("PASS")]
    if len(found) != passes:
        sys.exit(f"grading by {tree} did not finish:\n{done.stderr[-2000:]}")
    return [(float(j), float(c), int(n)) for j, c, n in found]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="another checkout of this project, measured in the same rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    trees = ([("before", args.before.resolve())] if args.before else []) + [("now", ROOT)]
    for r in range(1, args.rounds + 1):
        for label, tree in trees:
            passes = run(tree, args.passes)
            text = ", ".join(f"pass {p}: judge {j * 1000:.0f} ms, child {c * 1000:.0f} ms"
                             for p, (j, c, _) in enumerate(passes))
            print(f"round {r} {label:6s} {text} (a grade, {passes[0][2]} files)", flush=True)


if __name__ == "__main__":
    main()
