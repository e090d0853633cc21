"""GitHub Classroom: the ``result`` step output its autograding reporter reads (base64 of compact JSON,
one test per check with its own points, so Classroom records partial credit check by check).

How the reporter (``classroom-resources/autograding-grading-reporter`` at its tag ``v1``, commit
``d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca``, the pin in ``classroom.yml``; its ``dist/main.js``)
reads it, which ``tests/test_ci.py`` reproduces:

* the workflow passes ``result`` to it as the environment variable ``GRADER_RESULTS``; it decodes
  base64 and parses the JSON;
* Classroom records ``Points <sum of tests[].score>/<max_score>`` (its ``NotifyClassroom``), so the
  points are ours check by check;
* its log counts ``status == "pass"`` tests: ``Total points for grader: passed / tests * max_score``
  and "tests passed: P/N". So only a check that passed is ``pass``: a ``skipped`` one (GPU parity on
  a runner without CUDA) is ``fail`` with "skipped, not graded" in its name and message. Were it
  ``pass``, an untouched stub would read 4.55 points in the log while Classroom records 0.

Size: Linux refuses to start a program whose single environment string exceeds 128 KiB
(``MAX_ARG_STRLEN``, "Argument list too long"), and the reporter only reads the variable. So the
result is kept under ``RESULT_MAX_CHARS`` (64 KiB, half of that) whatever the checks print: each
message is cut to ``MESSAGE_CHARS`` and, when the whole is still too long, every message to the
same shorter length; then the ``test_code`` lines go. A test entry (a check and its points) is
never dropped. 133 checks with empty messages take ~41 KiB, so about 200 checks fit with
messages and about 300 without.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from grader.ci.commands import inert
from grader.exits import EXIT_FAILED, EXIT_OK
from grader.ci.grading import Graded, Outcome, friendly
from grader.export.gradebook_csv import format_number
from grader.words import clip, plural


STATUS_CLASSROOM = {"passed": "pass", "skipped": "fail", "failed": "fail", "error": "error", "timeout": "error"}
SKIPPED_NOTE = "skipped, not graded"
MESSAGE_CHARS = 300  # each test's message, at most
RESULT_MAX_CHARS = 64 * 1024  # the base64 text, at most (Linux: 128 KiB for one environment string)


def classroom_payload(o: Outcome) -> dict[str, Any]:
    """What Classroom's autograding reporter reads (schema: ``grader/schema/classroom_result.schema.json``).

    One test per check of the student view, each with its own points (partial
    credit); Classroom adds the scores up against ``max_score``. The
    overall status follows the exit status. When protected files changed,
    every score is 0: the points of a tampered repository are not reported.
    Each message is at most ``MESSAGE_CHARS`` long (``classroom_result`` may cut them further).
    """
    tampered = o.integrity.status == "modified"
    tests = []
    for g in o.counted:
        # A late penalty scales every check's points, so Classroom's sum is the final score.
        share = g.card.final_score / g.card.score if g.card.late and g.card.score > 0 else 1.0
        for c in g.card.checks:
            message = c.message if c.status != "passed" else ""
            if c.status == "skipped":
                message = f"{SKIPPED_NOTE[0].upper()}{SKIPPED_NOTE[1:]}: {message}"
            if tampered:
                message = f"not counted: protected files were changed ({', '.join(o.integrity.files)}). {message}"
            name = f"{c.exercise}: {friendly(c)}" + (f" ({SKIPPED_NOTE})" if c.status == "skipped" else "")
            tests.append({
                "name": inert(name),
                "status": STATUS_CLASSROOM[c.status],
                "score": 0 if tampered else round(c.score * share, 4),
                "message": clip(inert(message.strip()), MESSAGE_CHARS),
                "test_code": f"grader check {c.exercise}::{c.id}",
                "filename": g.path,
                "line_no": g.lines.get(c.exercise, 1),
                "duration": int(round(c.duration_s * 1000)),
            })
        if g.card.late:
            tests.append(_late_test(g))
    status = {EXIT_OK: "pass", EXIT_FAILED: "fail"}.get(o.exit_code, "error")
    return {"version": 1, "status": status, "max_score": round(o.max_score, 4), "tests": tests}


def _late_test(g: Graded) -> dict[str, Any]:
    """A 0-point entry that says what the late policy did (the checks' points already carry it)."""
    late = g.card.late or {}
    penalised = float(late.get("penalty_points", 0)) > 0
    said = (f"late policy: {format_number(late['raw_score'])} - {format_number(late['penalty_points'])} = "
            f"{format_number(late['final_score'])} {plural(late['final_score'], 'point')}; each check's points are scaled by that. " if penalised
            else "")
    return {"name": f"{g.card.assignment}: late policy", "status": "fail" if penalised else "pass", "score": 0,
            "message": clip(inert(said + str(late.get("rule", ""))), MESSAGE_CHARS),
            "test_code": "", "filename": g.path, "line_no": 1, "duration": 0}


def classroom_result(o: Outcome, limit: int = RESULT_MAX_CHARS) -> str:
    """The ``result`` output: base64 of the compact JSON payload (one line), at most ``limit`` characters
    when the test entries themselves fit (see the module's docstring)."""
    return encode(fit(classroom_payload(o), limit))


def encode(payload: dict[str, Any]) -> str:
    """Base64 of the compact JSON, as the reporter decodes it."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def fit(payload: dict[str, Any], limit: int) -> dict[str, Any]:
    """``payload`` with its messages cut, all to one length, so its encoding is at most ``limit``
    characters; then without test code. Never fewer tests: a check's points always reach Classroom."""
    if len(encode(payload)) <= limit:
        return payload
    longest = max((len(t["message"]) for t in payload["tests"]), default=0)
    low, high = 0, longest  # the longest per-message length that fits, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if len(encode(_messages_cut(payload, middle))) <= limit:
            low = middle
        else:
            high = middle - 1
    cut = _messages_cut(payload, low)
    if len(encode(cut)) <= limit:
        return cut
    return {**cut, "tests": [{**t, "test_code": ""} for t in cut["tests"]]}


def _messages_cut(payload: dict[str, Any], chars: int) -> dict[str, Any]:
    return {**payload, "tests": [{**t, "message": clip(t["message"], chars)} for t in payload["tests"]]}
