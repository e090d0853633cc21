"""Stage 3: run the hidden checks (pytest + pytest-json-report) against the proxy.

The checks live in ``grader/checks/<assignment>/`` and are ordinary pytest
tests. This module runs them in the judge process with a small plugin that
provides the fixtures (``student``, ``reference``, ``submission``...) and
records, for every test, a verdict in the lesson's words: which of the
typed sandbox errors ended it, or the assertion message written for
students. pytest-json-report collects the outcomes; ``scoring`` turns them
into points.
"""

from __future__ import annotations

import importlib.util
import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from pytest_jsonreport.plugin import JSONReport

from grader.config import AssignmentConfig
from grader.sandbox.errors import NotAttempted, StudentProblem, StudentTimeout
from grader.sandbox.proxy import StudentProxy
from grader.submission import Submission

CHECKS_ROOT = Path(__file__).resolve().parent / "checks"
MAX_MESSAGE = 1500


class ChecksBroken(Exception):
    """The hidden checks themselves could not be collected or run: a grader bug."""


@dataclass(frozen=True)
class Outcome:
    """What happened in one hidden check, before points are attached."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str
    status: str
    message: str
    duration_s: float


def load_reference(path: Path) -> ModuleType:
    """Import the reference solution in the judge (trusted code only)."""
    name = f"_reference_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ChecksBroken(f"cannot load the reference {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GraderPlugin:
    """Fixtures for the checks and a verdict for every test."""

    def __init__(self, student: StudentProxy, worker: Any, reference: ModuleType, submission: Submission,
                 assignment: AssignmentConfig, cuda: bool) -> None:
        self._student = student
        self._worker = worker
        self._reference = reference
        self._submission = submission
        self._assignment = assignment
        self._cuda = cuda

    @pytest.fixture
    def student(self) -> StudentProxy:
        return self._student

    @pytest.fixture
    def reference(self) -> ModuleType:
        return self._reference

    @pytest.fixture
    def submission(self) -> Submission:
        return self._submission

    @pytest.fixture
    def assignment(self) -> AssignmentConfig:
        return self._assignment

    @pytest.fixture
    def cuda_available(self) -> bool:
        return self._cuda

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):  # noqa: ANN201 - pytest hookwrapper
        before = self._worker.incidents
        outcome = yield
        if outcome.excinfo is None and self._worker.incidents != before:
            # The check passed, but the worker crashed or timed out inside it: fail closed.
            item.user_properties.append(("incident", True))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
        outcome = yield
        report = outcome.get_result()
        if report.when == "setup":
            marker = item.get_closest_marker("exercise")
            item.user_properties.append(("exercise", marker.args[0] if marker else ""))
            if report.skipped:
                item.user_properties.append(("verdict", {"status": "skipped", "message": _skip_reason(report)}))
        if report.when != "call":
            return
        item.user_properties.append(("verdict", _verdict(report, call, dict(item.user_properties))))


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return "skipped"


def _verdict(report: pytest.TestReport, call: pytest.CallInfo, props: dict) -> dict[str, str]:
    if report.skipped:
        return {"status": "skipped", "message": _skip_reason(report)}
    if report.passed:
        if props.get("incident"):
            return {"status": "error", "message": "the worker crashed or timed out during this check"}
        return {"status": "passed", "message": ""}
    exc = call.excinfo.value if call.excinfo else None
    if isinstance(exc, NotAttempted):
        return {"status": "failed", "message": "not attempted"}
    if isinstance(exc, StudentTimeout):
        return {"status": "timeout", "message": _clip(exc.student_message())}
    if isinstance(exc, StudentProblem):
        return {"status": exc.status, "message": _clip(exc.student_message())}
    if isinstance(exc, AssertionError):
        return {"status": "failed", "message": _clip(str(exc).strip() or "the check failed")}
    # A bug in a check itself, not in the submission: no points, and say so.
    return {"status": "error", "message": _clip(f"internal check error ({type(exc).__name__}: {exc}); please report this")}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def run_checks(plugin: GraderPlugin, assignment: AssignmentConfig, select: str | None = None) -> list[Outcome]:
    """Run every hidden check of ``assignment``; returns one Outcome per test."""
    report = JSONReport()
    args = [
        str(assignment.checks_dir),
        "-c", str(CHECKS_ROOT / "pytest.ini"),
        "--rootdir", str(CHECKS_ROOT),
        "--import-mode=importlib",
        "--assert=plain",
        "--tb=no",  # verdicts come from the exception objects; formatting tracebacks only costs time
        "-p", "no:cacheprovider",
        "-p", "no:randomly",
        "-q",
        "--json-report-file=none",
    ]
    if select:
        args += ["-k", select]
    sink = io.StringIO()
    with redirect_stdout(sink), redirect_stderr(sink):
        code = pytest.main(args, plugins=[plugin, report])
    data = report.report or {}
    broken = [c for c in data.get("collectors", []) if c.get("outcome") != "passed"]
    if broken or code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED):
        detail = broken[0].get("longrepr", "") if broken else sink.getvalue()[-2000:]
        raise ChecksBroken(f"the hidden checks could not run (pytest exit {int(code)}): {str(detail)[-500:]}")
    return [_outcome(t) for t in data.get("tests", [])]


def _outcome(test: dict[str, Any]) -> Outcome:
    props: dict[str, Any] = {}
    for entry in test.get("user_properties", []):
        props.update(entry)
    nodeid = test["nodeid"]
    check_id = nodeid.rsplit("::", 1)[-1]
    verdict = props.get("verdict") or {"status": "error", "message": "the check recorded no result"}
    duration = sum(float((test.get(phase) or {}).get("duration", 0.0)) for phase in ("setup", "call", "teardown"))
    return Outcome(
        test=check_id.split("[", 1)[0],
        check_id=check_id,
        exercise=str(props.get("exercise", "")),
        status=str(verdict["status"]),
        message=str(verdict["message"]),
        duration_s=round(duration, 6),
    )


def cuda_available() -> bool:
    """Asked in the judge only: the worker server must never touch CUDA before forking."""
    return bool(torch.cuda.is_available())


