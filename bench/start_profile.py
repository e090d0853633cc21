"""Profile: where a cold `grader grade` and a grader process's start spend their time, stage by stage.

Usage: python bench/start_profile.py [--repeat 3] [--assignment attention] [--launch forked subprocess]

Each round runs, in a fresh interpreter, the stages a cold ``grader grade`` of the reference goes
through, in its order (``--launch forked``: the server forked from the grader process, as ``grader
grade`` starts it; ``subprocess``: a fresh interpreter importing torch again, as before), and prints per stage the grader process's CPU and wall time, then the worker
server's CPU (its own ``import torch`` and warm-up, read from RUSAGE_CHILDREN once it has exited),
next to a bare ``python -c "import torch"`` measured in the same round. Medians over the rounds.
A bench tool only: it imports what the CLI imports, in the same order, and times each step.
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

STAGES = r'''
import json, resource, sys, time
marks = []
def mark(name):
    marks.append((name, time.process_time(), time.perf_counter()))
mark("interpreter")
from grader.cli import parser  # argparse and the verbs
mark("cli")
from grader.sandbox.launcher import WorkerServer
if sys.argv[4] == "forked":
    server = WorkerServer.forked()  # grader grade's way: import torch here, fork the server
    mark("import torch, fork the server")
else:
    server = WorkerServer()  # a fresh interpreter imports torch for the server
    mark("server started")
    import torch
    mark("import torch")
from grader import api
mark("import grader.api")
grader = api.Grader(sys.argv[1], server=server)
mark("judge ready (checks collected, reference)")
server.wait_ready()
mark("server ready (waited)")
card = grader.grade(__import__("pathlib").Path(sys.argv[2]))
mark("first grade")
from grader import scorecard
scorecard.write(card, __import__("pathlib").Path(sys.argv[3]))
mark("card written")
grader.close()
server.close()
mark("closed")
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"marks": marks, "server_cpu": children.ru_utime + children.ru_stime}))
'''

REFERENCE = {"attention": "solutions/attention.py", "attention-modules": "solutions/attention_modules.py"}


def one_round(assignment: str, out: Path, launch: str) -> tuple[dict, float, float]:
    start = time.perf_counter()
    torch_cpu = subprocess.run([sys.executable, "-c", "import resource, torch; u = resource.getrusage(0); "
                                "print(u.ru_utime + u.ru_stime)"], capture_output=True, text=True, check=True)
    torch_wall = time.perf_counter() - start
    done = subprocess.run([sys.executable, "-c", STAGES, assignment, str(ROOT / REFERENCE[assignment]), str(out), launch],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1]), float(torch_cpu.stdout), torch_wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--assignment", default="attention", choices=sorted(REFERENCE))
    parser.add_argument("--launch", nargs="+", default=["forked", "subprocess"], choices=["forked", "subprocess"])
    args = parser.parse_args()
    out = Path("/tmp/start-profile-card.json")
    done = {launch: [] for launch in args.launch}
    for _ in range(args.repeat):  # interleaved: both ways see the same machine
        for launch in args.launch:
            done[launch].append(one_round(args.assignment, out, launch))
    for launch, rounds in done.items():
        print(f"=== --launch {launch}")
        report(rounds, args.repeat)


def report(rounds: list[tuple[dict, float, float]], repeat: int) -> None:
    torch_cpu = statistics.median(r[1] for r in rounds)
    torch_wall = statistics.median(r[2] for r in rounds)
    names = [m[0] for m in rounds[0][0]["marks"]]
    print(f"bare `python -c 'import torch'`: {torch_wall * 1000:.0f} ms wall, {torch_cpu * 1000:.0f} ms CPU "
          f"(medians of {repeat})")
    print(f"{'stage':45s} {'CPU ms':>8s} {'wall ms':>8s}")
    total_cpu = total_wall = 0.0
    for i, name in enumerate(names[1:], start=1):
        cpu = statistics.median(r[0]["marks"][i][1] - r[0]["marks"][i - 1][1] for r in rounds)
        wall = statistics.median(r[0]["marks"][i][2] - r[0]["marks"][i - 1][2] for r in rounds)
        total_cpu, total_wall = total_cpu + cpu, total_wall + wall
        print(f"  {name:43s} {cpu * 1000:8.0f} {wall * 1000:8.0f}")
    first = statistics.median(r[0]["marks"][0][1] for r in rounds)
    server = statistics.median(r[0]["server_cpu"] for r in rounds)
    print(f"  {'(interpreter start, before the first line)':43s} {first * 1000:8.0f}")
    print(f"grader process: {(total_cpu + first) * 1000:.0f} ms CPU, {total_wall * 1000:.0f} ms wall after start-up")
    print(f"worker server and sandboxed children: {server * 1000:.0f} ms CPU")
    print(f"CPU of the whole cold grade: {(total_cpu + first + server) / torch_cpu:.2f}x a bare import torch; "
          f"wall: {total_wall / torch_wall:.2f}x")


if __name__ == "__main__":
    main()
