"""Benchmark: `grader check FILE` (a student's self-check) against `python -c "import torch"`.

Usage: python bench/check_latency.py [--repeat 5] [--python PATH] [--file F]

The two commands run interleaved, round after round, in the same run, so a
busy machine slows both; the medians and their ratio are printed (issue 7's
target: within 1.5x). ``--python`` times another interpreter's `grader`,
e.g. a virtual environment with a student kit from `grader release`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT).returncode
    if code not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose grader is timed")
    parser.add_argument("--file", type=Path, default=ROOT / "solutions" / "attention.py")
    args = parser.parse_args()
    torch_import, check = [], []
    for _ in range(args.repeat):
        torch_import.append(wall([args.python, "-c", "import torch"]))
        check.append(wall([args.python, "-m", "grader.cli", "check", str(args.file), "--assignment", "attention"]))
    t, c = statistics.median(torch_import), statistics.median(check)
    print(f"import torch       median {t:.2f} s  ({', '.join(f'{x:.2f}' for x in torch_import)})")
    print(f"grader check .py   median {c:.2f} s  ({', '.join(f'{x:.2f}' for x in check)})")
    print(f"ratio {c / t:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
