"""Profile: where the CPU time of one warm grade goes, per process and per stage.

Usage: python bench/profile_grade.py [--files 40] [--cpu 0] [--checks 15]

Grades the project's attention alternatives and mutants through one warm
``api.Grader`` pinned to one core (as a ``grade-all`` judge is) and prints,
per submission: the judge thread's CPU split into pytest's per-test
machinery, the checks' own code, and the round trips to the child inside
them; the sandboxed child's CPU (from /proc, before it is killed); and the
worker server's (fork, reap). With ``--checks N``, the N costliest checks too:
each one's thread CPU a grade (its fixtures included), the part of it spent in
round trips to the child, and its requests a grade. This is how the figures in
bench/README.md were taken; it instruments by wrapping functions, so it is a
bench tool only.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.session import session as checking  # noqa: E402
from grader.sandbox import client  # noqa: E402
from tests.corpus_cases import corpus  # noqa: E402

spent = {"checks": 0.0, "setup": 0.0, "teardown": 0.0, "judge": 0.0, "exchange": 0.0, "child": 0.0}
# Per check (its function's name): thread CPU, of which round trips, and requests.
per_check: dict[str, collections.Counter] = {k: collections.Counter() for k in ("cpu", "exchange", "requests")}
current = [""]  # the check running now


class Meter:
    """Thread CPU inside the test functions (the judge's runner calls ``pytest_pyfunc_call`` through
    ``item.runtest``); their fixtures' set-up and tear-down are timed around pytest's ``SetupState``."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):  # noqa: ANN201
        t = time.thread_time()
        yield
        spent["checks"] += time.thread_time() - t



def instrument() -> None:
    run_items, exchange, kill = checking.Judge._run_items, client.SubmissionWorker._exchange, client.SubmissionWorker._kill
    run_item = checking.run_item

    real_main, real_session = pytest.main, checking.Judge._session

    def session(self: checking.Judge) -> None:
        """The judge's own session (its import finder included), with the Meter among its plugins."""
        pytest.main = lambda args, plugins: real_main(args, plugins=[*plugins, Meter()])
        try:
            real_session(self)
        finally:
            pytest.main = real_main

    def timed(key: str, method):  # noqa: ANN001, ANN202 - the method's thread CPU time goes to spent[key]
        def wrapper(self, *a):  # noqa: ANN001, ANN202
            t = time.thread_time()
            try:
                return method(self, *a)
            finally:
                spent[key] += time.thread_time() - t
        return wrapper

    def exchange_of_check(self, *a):  # noqa: ANN001, ANN202 - a round trip's thread CPU, counted for its check
        t = time.thread_time()
        try:
            return exchange(self, *a)
        finally:
            per_check["exchange"][current[0]] += time.thread_time() - t
            per_check["requests"][current[0]] += 1

    def run_check(item, nextitem, owner=None):  # noqa: ANN001, ANN202 - one check's thread CPU, fixtures included
        current[0] = getattr(item, "originalname", item.name)
        t = time.thread_time()
        try:
            return run_item(item, nextitem, owner)
        finally:
            per_check["cpu"][current[0]] += time.thread_time() - t

    def measured_kill(self, child):  # noqa: ANN001, ANN202
        spent["child"] += client._cpu_seconds(child.pid)
        return kill(self, child)

    from _pytest.runner import SetupState

    SetupState.setup = timed("setup", SetupState.setup)
    SetupState.teardown_exact = timed("teardown", SetupState.teardown_exact)
    checking.Judge._session = session
    checking.Judge._run_items = timed("judge", run_items)
    client.SubmissionWorker._exchange = timed("exchange", exchange_of_check)
    checking.run_item = run_check
    client.SubmissionWorker._kill = measured_kill


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--checks", type=int, default=0, help="also list the N costliest checks")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    instrument()
    cases = [c for kind in ("alternatives", "mutants") for c in corpus(kind) if c.assignment == "attention"]
    with tempfile.TemporaryDirectory() as tmp:
        files = [case.write_submission(Path(tmp)) for case in (cases * 4)[: args.files]]
        with api.Grader("attention") as grader:
            grader.grade(files[0])  # warm: collection, first fork
            for key in spent:
                spent[key] = 0.0
            for counter in per_check.values():
                counter.clear()
            started, cpu = time.perf_counter(), time.process_time()
            for f in files:
                grader.grade(f)
            elapsed, judge_process = time.perf_counter() - started, time.process_time() - cpu
    server = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server (and its children) after it exited
    n = len(files)
    per = {k: v / n * 1000 for k, v in spent.items()}
    machinery = per["judge"] - per["checks"] - per["setup"] - per["teardown"]
    print(f"{n} warm grades on core {args.cpu}: {elapsed / n * 1000:.0f} ms wall each")
    print(f"judge process CPU            {judge_process / n * 1000:6.0f} ms")
    print(f"  judge thread (all checks)  {per['judge']:6.0f} ms")
    print(f"    per-check machinery       {machinery:5.0f} ms (the runner, verdicts, diagnosis)")
    print(f"    fixtures set-up/tear-down {per['setup'] + per['teardown']:5.0f} ms")
    print(f"    inside the checks         {per['checks']:5.0f} ms, of which round trips to the child {per['exchange']:.0f} ms")
    print(f"sandboxed child CPU          {per['child']:6.0f} ms")
    print(f"server + children, whole run {(server.ru_utime + server.ru_stime) * 1000:6.0f} ms "
          "(includes its start-up: import torch, warm-up)")
    if args.checks:
        print(f"the {args.checks} costliest checks, a grade: thread CPU (fixtures included), round trips, requests")
        for name, cpu in per_check["cpu"].most_common(args.checks):
            print(f"  {cpu / n * 1000:6.2f} ms  {per_check['exchange'][name] / n * 1000:5.2f} ms  "
                  f"{per_check['requests'][name] / n:5.1f}  {name}")


if __name__ == "__main__":
    main()
