"""GitHub Classroom: the ``result`` step output its autograding reporter reads (base64 of compact JSON,
one test per check with its own points, so Classroom records partial credit check by check)."""

from __future__ import annotations

import base64
import json
from typing import Any

from grader.ci.commands import inert
from grader.ci.context import EXIT_FAILED, EXIT_OK
from grader.ci.grading import Outcome, friendly


STATUS_CLASSROOM = {"passed": "pass", "skipped": "pass", "failed": "fail", "error": "error", "timeout": "error"}


def classroom_payload(o: Outcome) -> dict[str, Any]:
    """What Classroom's autograding reporter reads (schema: ``grader/schema/classroom_result.schema.json``).

    One test per check of the student view, each with its own points (partial
    credit); the reporter adds the scores up against ``max_score``. The
    overall status follows the exit status. When protected files changed,
    every score is 0: the points of a tampered repository are not reported.
    """
    tampered = o.integrity.status == "modified"
    tests = []
    for g in o.counted:
        for c in g.card.checks:
            message = c.message if c.status != "passed" else ""
            if tampered:
                message = f"not counted: protected files were changed ({', '.join(o.integrity.files)}). {message}"
            tests.append({
                "name": inert(f"{c.exercise}: {friendly(c)}"),
                "status": STATUS_CLASSROOM[c.status],
                "score": 0 if tampered else round(c.score, 4),
                "message": inert(message.strip()),
                "test_code": f"grader check {c.exercise}::{c.id}",
                "filename": g.path,
                "line_no": g.lines.get(c.exercise, 1),
                "duration": int(round(c.duration_s * 1000)),
            })
    status = {EXIT_OK: "pass", EXIT_FAILED: "fail"}.get(o.exit_code, "error")
    return {"version": 1, "status": status, "max_score": round(o.max_score, 4), "tests": tests}


def classroom_result(o: Outcome) -> str:
    """The ``result`` output: base64 of the compact JSON payload (one line)."""
    text = json.dumps(classroom_payload(o), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(text.encode("utf-8")).decode("ascii")
