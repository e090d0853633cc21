"""A scorecard in pytest-json-report's format, for tools that already read pytest's JSON reports.

The format is the one the ``pytest-json-report`` plugin writes
(https://github.com/numirias/pytest-json-report, README "Format"), built by
that package's own serialiser (``pytest_jsonreport.serialize``: each test item,
each stage, the summary) from a card, without running pytest again: a card's
checks are already pytest's verdicts. ``tests/test_export_formats.py`` checks
the result against a report the installed plugin itself writes.

Top level, as the plugin's ``make_report``: ``created`` (the card's
``graded_at`` as a Unix time, else now), ``duration`` (the card's seconds),
``exitcode`` (pytest's: 0 every check passed or was skipped, 1 some check did
not pass, 3 the grader itself failed), ``root`` (the graded file: there is no
rootdir), ``environment`` (the view's environment, plus ``grader_view``: the
student's has no ``input_seed``, as ``views.student_view`` drops it),
``summary`` (``make_summary``: a count per outcome, ``total`` and
``collected``), ``collectors`` and ``tests``; no ``warnings`` (nothing warned).

``collectors`` as the plugin's ``make_collector``/``make_collectitem``: the
session's (nodeid ``""``) lists one ``Module`` per ``ASSIGNMENT/EXERCISE`` (the
``ASSIGNMENT`` itself for a grader error), each of which lists its checks as
``Function`` items (``lineno`` 0), every collection ``passed``: a card's checks
all ran or were skipped, none failed to be collected.

One test per check, in card order: ``nodeid`` = ``ASSIGNMENT/EXERCISE::CHECK``
(unique on a card: check ids repeat across exercises), ``lineno`` 0 (a card
has no source line), ``keywords`` = [check id, exercise, assignment],
``outcome`` mapped from our status, its stages, and ``metadata`` with the
points (pytest has none): ``exercise``, ``status``, ``score``, ``max_score``,
``visibility``. Statuses map as pytest reports them:

* ``passed`` -> ``passed``: setup, call and teardown ``passed``.
* ``failed`` -> ``failed``: the call stage ``failed`` with ``crash``,
  ``traceback`` and ``longrepr``, ``crash.message`` and ``longrepr`` the
  check's message.
* ``error`` and ``timeout`` -> ``error`` (as JUnit's ``<error>``: the check
  could not finish because the code raised or ran out of time), written as the
  plugin writes pytest's error, a failed setup: the setup stage ``failed`` with
  ``crash``, ``traceback`` and ``longrepr`` (the message), no call stage, the
  teardown ``passed``. A reader counting outcomes sees an error, never a
  failure of the property.
* ``skipped`` -> ``skipped``: the setup stage ``skipped`` with ``longrepr``
  ``Skipped: <why>`` and no call stage, as pytest writes a skip mark (the
  plugin's ``longrepr`` there is the text of pytest's tuple,
  ``"('file', line, 'Skipped: <why>')"``; a check has no file line, so ours is
  the reason alone).

A ``crash`` (and the one ``traceback`` entry, the same location: a check is
one frame) has ``path`` ``""`` and ``lineno`` 0: a card has no source line.

A card with ``grader_error`` gets one more test, ``ASSIGNMENT::grader_error``,
an error as above, and ``exitcode`` 3: that card is not a grade.

Views (``views.student_view``, as the HTML report): ``student`` (default)
keeps only the status and points of hidden checks (``hidden check N``, a
neutral message, no duration) and writes no stage ``stdout``; ``instructor``
keeps everything, and the printed output goes into the first test's call
stage ``stdout`` (its setup stage's, when it errored), where pytest keeps a
test's captured output.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_jsonreport import serialize

from grader.export import views
from grader.files import write_atomically
from grader.scorecard import CheckResult, Scorecard

VIEWS = views.VIEWS
OUTCOME = {"passed": "passed", "failed": "failed", "error": "error", "timeout": "error", "skipped": "skipped"}
# The top-level keys the plugin writes when nothing warned, in its order.
KEYS = ("created", "duration", "exitcode", "root", "environment", "summary", "collectors", "tests")


def report(card: Scorecard, view: str = "student") -> dict[str, Any]:
    """The report object for one card, as ``view`` may see it.

    Everything is read from the view (``views.as_seen_by``), never from ``card`` itself: the
    student's view has no seed of the hidden inputs in its ``environment``, and neither has this.
    """
    shown = views.as_seen_by(card, view)
    tests = [_test(shown.assignment, check) for check in shown.checks]
    if shown.grader_error:
        tests.append(_grader_error(shown, view))
    if view == "instructor" and shown.output and tests:
        tests[0]["call" if "call" in tests[0] else "setup"]["stdout"] = shown.output
    return {
        "created": _created(shown.graded_at),
        "duration": shown.duration_s,
        "exitcode": _exitcode(shown),
        "root": shown.submission.file,
        "environment": {**shown.environment, "grader_view": view,
                        **({"grader_late_policy": shown.late} if shown.late else {})},
        "summary": _summary(tests),
        "collectors": _collectors(tests),
        "tests": tests,
    }


def report_view(path: Path) -> str | None:
    """The view an existing report was written for (``environment.grader_view``), or None."""
    try:
        view = json.loads(path.read_text(encoding="utf-8")).get("environment", {}).get("grader_view")
    except (OSError, ValueError, AttributeError):
        return None
    return view if view in VIEWS else None


def write(card: Scorecard, path: Path, view: str = "student") -> None:
    """Write the report atomically, UTF-8 JSON (the plugin's ``json.dump``, indented for people)."""
    text = json.dumps(report(card, view), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomically(path, text)


def report_path(card_path: Path) -> Path:
    """Where ``--report pytest-json`` puts a card's report: ``alice.json`` -> ``alice.report.json``
    (pytest-json-report's own default name is ``.report.json``)."""
    return card_path.with_suffix(".report.json")


def _created(graded_at: str) -> float:
    """The card's ``graded_at`` (ISO 8601) as a Unix time, so the same card always gives the same report."""
    if not graded_at:
        return time.time()
    try:
        moment = dt.datetime.fromisoformat(graded_at.replace("Z", "+00:00"))
    except ValueError:
        return time.time()
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def _exitcode(card: Scorecard) -> int:
    if card.grader_error:
        return int(pytest.ExitCode.INTERNAL_ERROR)  # pytest's own codes: the report's exitcode is pytest's
    failed = any(c.status not in ("passed", "skipped") for c in card.checks)
    return int(pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK)


def _summary(tests: list[dict[str, Any]]) -> dict[str, int]:
    """The plugin's ``make_summary``: a count per outcome, then ``total`` and ``collected``."""
    return dict(serialize.make_summary({t["nodeid"]: t for t in tests}, collected=len(tests)))


@dataclass(frozen=True)
class _Crash:
    """What ``make_teststage`` reads of pytest's ``ReprFileLocation``: a check has no source line."""

    message: str
    path: str = ""
    lineno: int = 0


@dataclass(frozen=True)
class _Entry:
    """One entry of pytest's ``ReprTraceback.reprentries``: ``make_teststage`` reads its location."""

    reprfileloc: _Crash


@dataclass(frozen=True)
class _Traceback:
    reprentries: tuple[_Entry, ...]


@dataclass(frozen=True)
class _Longrepr:
    """What ``make_teststage`` reads of a failed phase's ``longrepr``: the crash, the traceback and the text."""

    text: str
    reprcrash: _Crash | None = None
    reprtraceback: _Traceback | None = None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class _PhaseReport:
    """The attributes of pytest's ``TestReport`` that ``make_teststage`` reads, for one phase of a check."""

    outcome: str
    duration: float
    longrepr: _Longrepr | None = None

    @property
    def longreprtext(self) -> str:
        return str(self.longrepr) if self.longrepr else ""


def _stage(outcome: str, duration: float, message: str = "", longrepr: str | None = None) -> dict[str, Any]:
    """A setup/call/teardown stage by the plugin's ``make_teststage``; a failed one has ``crash`` and a
    one-entry ``traceback`` (the check), as pytest's report of a raised exception."""
    text = message if longrepr is None else longrepr
    if outcome == "failed":
        crash = _Crash(message)
        repr_ = _Longrepr(text, crash, _Traceback((_Entry(crash),)))
    else:
        repr_ = _Longrepr(text) if text else None
    return serialize.make_teststage(_PhaseReport(outcome, duration, repr_), "", "", None, omit_traceback=False)


@dataclass(frozen=True)
class Module:
    """A collector node for ``make_collectitem`` (which writes the class name as ``type``): an exercise."""

    nodeid: str


@dataclass(frozen=True)
class Function:
    """A test item for ``make_collectitem``: a check, at line 0 (``location`` is pytest's (file, line, name))."""

    nodeid: str
    location: tuple[str, int, str] = ("", 0, "")


@dataclass(frozen=True)
class _CollectReport:
    """What ``make_collector`` reads of pytest's ``CollectReport``: every collection here passed."""

    nodeid: str
    outcome: str = "passed"
    longrepr: None = None


def _collectors(tests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plugin's ``collectors``: the session's, listing the modules, then each module's, listing its
    tests, in the order the tests come (``ASSIGNMENT/EXERCISE::CHECK`` -> module ``ASSIGNMENT/EXERCISE``)."""
    modules: dict[str, list[str]] = {}
    for test in tests:
        modules.setdefault(test["nodeid"].rsplit("::", 1)[0], []).append(test["nodeid"])
    collectors = [serialize.make_collector(_CollectReport(""), [serialize.make_collectitem(Module(m)) for m in modules])]
    collectors += [serialize.make_collector(_CollectReport(m), [serialize.make_collectitem(Function(n)) for n in ids])
                   for m, ids in modules.items()]
    return collectors


def _test(assignment: str, check: CheckResult) -> dict[str, Any]:
    outcome = OUTCOME[check.status]
    test: dict[str, Any] = serialize.make_testitem(f"{assignment}/{check.exercise}::{check.id}",
                                                    [check.id, check.exercise, assignment], ("", 0, ""))
    test["outcome"] = outcome
    if outcome == "skipped":
        test["setup"] = _stage("skipped", 0.0, longrepr=f"Skipped: {check.message}")
    elif outcome == "error":  # pytest's error: the setup failed, the test was never called
        test["setup"] = _stage("failed", check.duration_s, check.message)
    else:
        test["setup"] = _stage("passed", 0.0)
        test["call"] = _stage(outcome, check.duration_s, "" if outcome == "passed" else check.message)
    test["teardown"] = _stage("passed", 0.0)
    test["metadata"] = {"exercise": check.exercise, "status": check.status, "score": check.score,
                        "max_score": check.max_score, "visibility": check.visibility}
    if check.override is not None:  # a staff override: the points given, the points graded, and why
        test["metadata"]["override"] = asdict(check.override)
    return test


def _grader_error(card: Scorecard, view: str) -> dict[str, Any]:
    """The test that says the card is not a grade; the detail only where hidden checks are not masked."""
    detail = card.grader_error if view == "instructor" else "the details are shown to course staff only"
    message = f"the grader itself failed; this card is not a grade: {detail}"
    test: dict[str, Any] = serialize.make_testitem(f"{card.assignment}::grader_error",
                                                    ["grader_error", card.assignment], ("", 0, ""))
    test.update(outcome="error", setup=_stage("failed", 0.0, message), teardown=_stage("passed", 0.0))
    return test
