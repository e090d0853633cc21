"""Benchmark: the CPU that ``grade-all``'s parent process (the batch itself, not its grader processes) spends.

Usage: python bench/parent_cpu.py [--students 200] [--repeat 2] [--distinct] [--phases] [--keep DIR]

Makes a class of S students (``class_throughput.make_class``: the project's attention alternatives and
mutants, cycled, so a class of 200 holds copies), then runs ``grade-all`` R times, each in a fresh Python
process (its imports count, as they do for ``grader grade-all``) into a fresh ``--out``, and prints the
parent's CPU (``time.process_time`` from just before ``grader.cli.main``: that process only, the grader
processes are its children) per run, its median, and per student. ``--distinct``: a comment with the
student's number ends each file, so no two files are the same (the same tokens, though). ``--phases``:
also the CPU inside each stage of the batch, measured by wrapping its functions (inclusive times; a stage
called inside another counts in both). ``--keep DIR``: the last run's ``--out`` is left in DIR, to
``diff -r`` against another version's.

The parent competes with the grader processes for the cores, so its CPU per student is what this
tracks; the wall time is printed too, but it depends on the grader processes and the machine's load.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.class_throughput import make_class  # noqa: E402

PHASES = (  # module, attribute: the stages worth seeing apart
    ("grader.batch.run", "fingerprint"),
    ("grader.batch.intake", "scan"),
    ("grader.batch.fallbacks", "said"),
    ("grader.batch.run", "_row_without_grading"),
    ("grader.batch.run", "GraderPool"),
    ("grader.batch.cohort", "keep_sources"),
    ("grader.batch.similarity", "build_store"),
    ("grader.batch.similarity", "starter_tokens"),
    ("grader.batch.pool", "GraderPool.events"),
    ("grader.batch.run", "result_row"),
    ("grader.batch.final", "Stage.fresh"),
    ("grader.scorecard", "write"),
    ("grader.scorecard", "Scorecard.from_dict"),
    ("grader.batch.run", "write_record"),
    ("grader.batch.progress", "Progress.advance"),
    ("grader.batch.run", "write_outputs"),
    ("grader.batch.outputs", "summary.summarise"),
    ("grader.batch.outputs", "gradebook_csv.write"),
    ("grader.batch.outputs", "cohort.write"),
    ("grader.batch.cohort", "_write_plots"),
    ("grader.batch.cohort", "_write_similarity"),
    ("grader.batch.cohort", "_write_index"),
    ("grader.batch.run", "_changes"),
)


def instrument(spent: dict[str, float]) -> None:
    """Wrap each of ``PHASES`` so that its CPU adds up in ``spent`` (outermost call only; a generator's
    CPU is its own, between the values it yields)."""
    for module_name, dotted in PHASES:
        owner = importlib.import_module(module_name)
        *path, name = dotted.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        label = f"{module_name.rsplit('.', 1)[-1]}.{dotted}"
        timed = _timed_generator if inspect.isgeneratorfunction(original) else _timed
        setattr(owner, name, timed(original, label, spent))


def _timed(original: Callable[..., Any], label: str, spent: dict[str, float]) -> Callable[..., Any]:
    depth = [0]

    @functools.wraps(original)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return original(*args, **kwargs)
        depth[0] += 1
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - start
            depth[0] -= 1

    return wrapped


def _timed_generator(original: Callable[..., Any], label: str, spent: dict[str, float]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        values = original(*args, **kwargs)
        while True:
            start = time.process_time()
            try:
                value = next(values)
            except StopIteration:
                return
            finally:
                spent[label] += time.process_time() - start
            yield value

    return wrapped


def run_once(subs: Path, out: Path) -> tuple[float, float]:
    """(parent CPU, wall) of one ``grade-all`` into a fresh ``out``."""
    from grader import cli  # imported before the clock starts, as `grader` has it when main() runs

    shutil.rmtree(out, ignore_errors=True)
    argv, sys.argv = sys.argv, ["grader", "grade-all", "--assignment", "attention", "--out", str(out), str(subs)]
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        cli.main()
    except SystemExit:
        pass
    finally:
        sys.argv = argv
    return time.process_time() - cpu, time.perf_counter() - wall


def child(subs: Path, out: Path, phases: bool) -> None:
    """One run in this (fresh) process; its figures as one JSON line on stdout."""
    spent: dict[str, float] = defaultdict(float)
    if phases:
        instrument(spent)
    cpu, wall = run_once(subs, out)
    print(json.dumps({"cpu": cpu, "wall": wall, "phases": spent}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--distinct", action="store_true")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--child", nargs=2, type=Path, metavar=("SUBS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child, args.phases)
    spent: dict[str, float] = defaultdict(float)
    with tempfile.TemporaryDirectory(prefix="parent-cpu-") as scratch:
        subs, out = Path(scratch) / "subs", Path(scratch) / "out"
        subs.mkdir()
        for i, path in enumerate(make_class(subs, args.students)):
            if args.distinct:
                path.write_text(path.read_text(encoding="utf-8") + f"\n# student {i}\n", encoding="utf-8")
        cpus = []
        for i in range(args.repeat):
            done = subprocess.run([sys.executable, __file__, "--child", str(subs), str(out)]
                                  + ["--phases"] * args.phases, cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, check=True)
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            cpus.append(figures["cpu"])
            for label, seconds in figures["phases"].items():
                spent[label] += seconds
            print(f"run {i + 1}: parent cpu {figures['cpu']:.2f} s "
                  f"({1000 * figures['cpu'] / args.students:.1f} ms a student), wall {figures['wall']:.1f} s",
                  flush=True)
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(out, args.keep)
    median = statistics.median(cpus)
    print(f"parent cpu, median of {len(cpus)}: {median:.2f} s, {1000 * median / args.students:.1f} ms a student")
    for label, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:40s} {seconds / len(cpus):7.2f} s a run (inclusive)")


if __name__ == "__main__":
    main()
