"""Measure the sandboxed child's address space (VmPeak) and resident memory while grading the reference.

Sizes the RLIMIT_AS default (memory_mib): run `python bench/child_memory.py`.
Reads the child's /proc status after its file is loaded and again just before
it is killed at the end of the grading (by wrapping two SubmissionWorker methods).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.sandbox import client  # noqa: E402

FIELDS = ("VmPeak", "VmHWM", "VmSize", "VmRSS")


def status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines) if k in FIELDS}


def main() -> None:
    start, kill = client.SubmissionWorker._start, client.SubmissionWorker._kill

    def measured_start(self: client.SubmissionWorker) -> None:
        start(self)
        if self._child is not None:
            print("after load      ", status(self._child.pid))

    def measured_kill(self: client.SubmissionWorker, child: client.Child) -> int | None:
        print("after all checks", status(child.pid))
        return kill(self, child)

    client.SubmissionWorker._start = measured_start
    client.SubmissionWorker._kill = measured_kill
    with api.Grader("attention") as grader:
        card = grader.grade(ROOT / "solutions/attention.py")
    print(f"score {card.score:g}/{card.max_score:g}")


if __name__ == "__main__":
    main()
