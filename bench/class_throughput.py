"""Benchmark: a class graded by ``grader grade-all``, as ratios against baselines from the same run.

Usage: python bench/class_throughput.py [--students 200] [--jobs 2] [--naive 6] [--repeat 3]

Prints, all measured now on this machine:
  (a) wall time of ``grade-all --jobs N`` over S submissions: the project's
      correct alternatives and single-bug mutants (assignment ``attention``),
      cycled to S students;
  (b) its throughput against the naive baseline - one fresh ``grader grade``
      process per submission, timed on a sample of the same files;
  (c) one cold ``grader grade`` of the reference against ``python -c "import
      torch"`` (medians, runs interleaved);
  (d) the peak memory of the whole batch, all its processes together
      (judges, worker servers, sandboxed children), sampled every 50 ms:
      the sum of PSS (shared pages split between sharers) and of RSS.
Never a timed assertion: the figures are for the README's table and the note.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus_cases import corpus  # noqa: E402 - the corpus reader lives with the project's tests

GRADER = [sys.executable, "-m", "grader.cli"]


def make_class(folder: Path, students: int) -> list[Path]:
    cases = [c for kind in ("alternatives", "mutants") for c in corpus(kind) if c.assignment == "attention"]
    files = []
    for i in range(students):
        path = folder / f"s{i:04d}.py"
        path.write_text(cases[i % len(cases)].source(), encoding="utf-8")
        files.append(path)
    return files


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=False, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc (servers start new sessions but stay descendants)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def memory_of(pids: list[int]) -> tuple[int, int]:
    """(sum of PSS, sum of RSS) in KiB."""
    pss = rss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1])
        except OSError:
            continue
    return pss, rss


def batch_run(folder: Path, out: Path, jobs: int, sample: bool) -> tuple[float, int, int, str]:
    """(wall seconds, peak PSS KiB, peak RSS KiB, the batch's counts line).

    Sampling walks /proc 20 times a second, which costs CPU the batch would
    use: (a) is timed on a run without it, (d) measured on a second run.
    """
    start = time.perf_counter()
    proc = subprocess.Popen([*GRADER, "grade-all", str(folder), "--assignment", "attention", "--out", str(out),
                             "--jobs", str(jobs), "--force", "--progress", "lines"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while sample and not done.is_set():
            pss, rss = memory_of(tree(proc.pid))
            peak[0], peak[1] = max(peak[0], pss), max(peak[1], rss)
            done.wait(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    counts = next((line for line in err.splitlines() if line.startswith("graded ")), err.strip()[-200:])
    return elapsed, peak[0], peak[1], counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--naive", type=int, default=8, help="submissions graded the naive way (one process each)")
    parser.add_argument("--repeat", type=int, default=3, help="cold-start runs of (c)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        files = make_class(folder, args.students)

        torch_import, cold = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same machine load
            torch_import.append(wall([sys.executable, "-c", "import torch"]))
            cold.append(wall([*GRADER, "grade", str(ROOT / "solutions/attention.py"), "--assignment", "attention",
                              "--out", str(Path(tmp) / "cold.json"), "--format", "none"]))

        batch_wall, _, _, counts = batch_run(folder, Path(tmp) / "out", args.jobs, sample=False)
        sampled_wall, pss, rss, _ = batch_run(folder, Path(tmp) / "out2", args.jobs, sample=True)

        naive = [wall([*GRADER, "grade", str(f), "--assignment", "attention", "--out", str(Path(tmp) / "n.json"),
                       "--format", "none"]) for f in files[: args.naive]]

    base, cold_s = statistics.median(torch_import), statistics.median(cold)
    batch_rate = args.students / batch_wall
    naive_rate = len(naive) / sum(naive)
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(f"(a) grade-all --jobs {args.jobs}, {args.students} submissions: {batch_wall:.1f} s wall "
          f"({batch_wall / args.students * 1000:.0f} ms a submission; target < 30 s)   [{counts}]")
    print(f"(b) throughput {batch_rate:.2f}/s vs naive {naive_rate:.3f}/s (one `grader grade` process each, "
          f"{len(naive)} timed, {statistics.mean(naive):.2f} s each): {batch_rate / naive_rate:.1f}x (target >= 25x)")
    print(f"(c) cold `grader grade` of the reference {cold_s:.2f} s vs `import torch` {base:.2f} s: "
          f"{cold_s / base:.2f}x (target <= 1.5x)   runs: {[round(x, 2) for x in cold]} / {[round(x, 2) for x in torch_import]}")
    print(f"(d) peak memory of the whole batch: PSS {pss / 1048576:.2f} GiB, RSS {rss / 1048576:.2f} GiB "
          f"(target < 3 GiB; a second run, {sampled_wall:.1f} s with the sampler)")


if __name__ == "__main__":
    main()
