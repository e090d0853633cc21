"""Benchmark: what ``grade-all``'s grader processes cost to start, against a bare ``import torch``.

Usage: python bench/pool_start.py [--jobs 2] [--rounds 3] [--before TREE]

Each round, in fresh interpreters: a bare ``python -c "import torch"`` (its CPU and wall), then a
``GraderPool`` of ``--jobs`` grader processes started by this tree (and by ``TREE``, another checkout
such as ``git worktree add /tmp/before <commit>``, when given), timed from ``GraderPool(...)`` until
every grader process said it is ready (its worker server forked, its checks collected), then closed.
The CPU is every process of the pool (the zygote where there is one, the grader processes, their
servers), read from ``RUSAGE_CHILDREN`` once they are all reaped; divided by ``--jobs`` it is what one
grader process's start costs. Medians over the rounds. Nothing is graded; no assertion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

START = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from grader.batch.pool import GraderPool
from grader.config import load_config

if __name__ == "__main__":
    config = Path(sys.argv[1]) / "assignments.yaml"
    jobs = int(sys.argv[2])
    assignment = load_config(config).assignments["attention"]
    started = time.perf_counter()
    pool = GraderPool(jobs, assignment, config, strict=False)
    ready = 0
    while ready < jobs:
        for kind, payload in pool.events(wait=0.05):
            if kind == "fatal":
                raise SystemExit(f"a grader process could not start: {payload}")
            ready += kind == "ready"
    wall = time.perf_counter() - started
    pool.close(graceful=True)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("RESULT " + json.dumps({"wall": wall, "cpu": used.ru_utime + used.ru_stime}))
"""


def pool_start(tree: Path, jobs: int) -> tuple[float, float]:
    """(seconds until every grader process is ready, CPU of the whole pool) for ``tree``'s pool."""
    script = Path(f"/tmp/grader-bench-pool-start-{time.monotonic_ns()}.py")  # a file: the spawn start method needs one
    script.write_text(START)
    try:
        done = subprocess.run([sys.executable, str(script), str(tree), str(jobs)], capture_output=True, text=True,
                              cwd=tree, timeout=300)
    finally:
        script.unlink()
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"{tree}: the pool did not start:\n{done.stderr[-2000:]}")
    result = json.loads(line[7:])
    return result["wall"], result["cpu"]


def bare_torch() -> tuple[float, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import resource, torch; u = resource.getrusage(resource.RUSAGE_SELF); "
                           "print(u.ru_utime + u.ru_stime)"], capture_output=True, text=True, check=True)
    return time.perf_counter() - started, float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout of this project, timed in the same rounds")
    args = parser.parse_args()
    trees = {"now": ROOT} if args.before is None else {"before": args.before.resolve(), "now": ROOT}
    torch_runs: list[tuple[float, float]] = []
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        torch_runs.append(bare_torch())
        for name, tree in trees.items():
            runs[name].append(pool_start(tree, args.jobs))
    torch_wall = statistics.median(w for w, _ in torch_runs)
    torch_cpu = statistics.median(c for _, c in torch_runs)
    print(f"{args.jobs} grader processes; medians of {args.rounds} rounds")
    print(f"{'bare import torch':<12} wall {torch_wall:5.2f} s, CPU {torch_cpu:5.2f} s")
    for name, done in runs.items():
        wall, cpu = statistics.median(w for w, _ in done), statistics.median(c for _, c in done)
        print(f"{name:<17} ready after {wall:5.2f} s ({wall / torch_wall:.2f}x the wall of import torch), "
              f"CPU {cpu:5.2f} s in all, {cpu / args.jobs:5.2f} s a grader process "
              f"({cpu / args.jobs / torch_cpu:.2f}x the CPU of import torch)")


if __name__ == "__main__":
    main()
