"""How many grader processes a small class pays for: `grade-all` of N copies of the reference with
``--jobs 1`` against ``--jobs <cores>``, interleaved rounds, medians; and what the default picks
(``grader.batch.run.default_jobs``). A ratio above 1 means the extra processes cost more than they save.

    .venv/bin/python bench/jobs.py [--sizes 4 8 16 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.batch.run import default_jobs  # noqa: E402


def grade_all(folder: Path, out: Path, jobs: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(folder), "--assignment", "attention",
                    "--out", str(out), "--jobs", str(jobs)], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores; medians of {args.rounds} interleaved rounds")
    print(f"{'students':>8} {'jobs 1':>8} {f'jobs {cores}':>8} {'ratio':>6}  default")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            folder = Path(tmp) / f"class{n}"
            folder.mkdir()
            for i in range(n):
                shutil.copy(ROOT / "solutions" / "attention.py", folder / f"s{i:03d}.py")
            one, many = [], []
            for _ in range(args.rounds):
                one.append(grade_all(folder, Path(tmp) / "out", 1))
                many.append(grade_all(folder, Path(tmp) / "out", cores))
            a, b = statistics.median(one), statistics.median(many)
            print(f"{n:>8} {a:>7.2f}s {b:>7.2f}s {b / a:>6.2f}  {default_jobs(n, cores)}")


if __name__ == "__main__":
    main()
