"""Benchmark: grading latency as ratios against `python -c "import torch"` in the same run.

Usage: python bench/latency.py [--repeat 3]
Prints, for the reference solution: the cold CLI (`grader grade`, which
starts its own warm server), one grade through an already-warm server and judge, and
the per-submission start latency of a sandboxed child (fork + layers +
load), each next to a fresh `import torch` measured in the same run (the
cold CLI and `import torch` interleaved, round after round).
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


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    n = parser.parse_args().repeat
    from grader import api
    from grader.sandbox.client import Limits, SubmissionWorker, WorkerServer

    out = Path(tempfile.mkdtemp()) / "card.json"
    grade = [sys.executable, "-m", "grader.cli", "grade", str(ROOT / "solutions/attention.py"),
             "--assignment", "attention", "--out", str(out), "--format", "none"]
    torch_import, cli = [], []
    for _ in range(n):  # interleaved, so a machine that slows down or speeds up moves both alike
        torch_import.append(wall([sys.executable, "-c", "import torch"]))
        cli.append(wall(grade))
    source = (ROOT / "solutions/attention.py").read_text()
    with WorkerServer() as server:
        warm, starts = [], []
        with api.Grader("attention", server=server) as grader:  # warm server and warm judge, as grade-all's
            grader.grade(ROOT / "solutions/attention.py")
            for _ in range(n):
                t = time.perf_counter()
                grader.grade(ROOT / "solutions/attention.py")
                warm.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as scratch:
            for _ in range(10 * n):
                t = time.perf_counter()
                worker = SubmissionWorker(server, source, "attention.py", Limits(), Path(scratch))
                worker.ensure_started()
                starts.append(time.perf_counter() - t)
                worker.close()
    base = statistics.median(torch_import)
    rows = [
        ("python -c 'import torch'", base),
        ("grader grade (cold CLI, reference)", statistics.median(cli)),
        ("grade via warm server and judge (reference)", statistics.median(warm)),
        ("sandboxed child start (fork+layers+load)", statistics.median(starts)),
    ]
    for name, seconds in rows:
        print(f"{name:45s} {seconds * 1000:9.1f} ms   x{seconds / base:6.3f} of import torch")


if __name__ == "__main__":
    main()
