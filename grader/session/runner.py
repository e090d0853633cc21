"""Run one collected check as pytest's runtest protocol would, without its per-test hooks and reports.

pytest's protocol (``_pytest.runner.runtestprotocol``) wraps each phase of a test (set-up, call,
tear-down) in a ``CallInfo``, builds a ``TestReport`` for each, writes ``PYTEST_CURRENT_TEST`` into the
environment three times, and dispatches about a dozen hooks through pluggy. Over the 133 checks of a
grade that was ~55 ms of the judge's ~190 ms of CPU (``bench/profile_grade.py``), and the judge read none
of it: a verdict needs only the exception that ended the check. So the judge drives the phases itself:

* set-up through pytest's own ``SetupState`` (the session's): fixture scopes, caching, parametrisation
  and finalizers stay pytest's, exactly as under its protocol;
* the call through ``item.runtest()``, which is ``pytest_pyfunc_call``: the check runs with its fixtures;
* tear-down toward the next item, again through the ``SetupState``.

What each phase raised is kept; nothing else is recorded. ``tests/test_runner.py`` grades the same
submissions through this and through pytest's own protocol and requires the same verdicts, so a pytest
release that changes ``SetupState`` shows there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import pytest

# pytest's outcomes (skip, fail, xfail) derive from BaseException, not Exception: a check's own exit.
CHECK_OUTCOMES: tuple[type[BaseException], ...] = (Exception, pytest.skip.Exception, pytest.fail.Exception)


@dataclass(frozen=True)
class Ran:
    """How one check ended: ``error`` is what its set-up, call or tear-down raised first (None: passed)."""

    error: BaseException | None
    duration: float


def run_item(item: pytest.Function, nextitem: pytest.Item | None) -> Ran:
    """Set up ``item``'s fixtures, call it, tear down what ``nextitem`` does not share; what raised first."""
    state = item.session._setupstate
    if not item._request:  # the item ran before (once per submission): a fresh request, as pytest would make
        item._initrequest()
    start = time.perf_counter()
    try:
        error = _raised(lambda: state.setup(item))
        if error is None:
            error = _raised(item.runtest)
        torn = _raised(lambda: state.teardown_exact(nextitem))
    finally:
        item._request = False  # funcargs and the request go, as at the end of pytest's protocol
        item.funcargs = None
    return Ran(error if error is not None else torn, time.perf_counter() - start)


def _raised(phase: Callable[[], object]) -> BaseException | None:
    try:
        phase()
    except CHECK_OUTCOMES as exc:
        return exc
    return None


def skip_message(error: BaseException) -> str | None:
    """The reason a check skipped (``pytest.skip``, or a group of only skips, as hypothesis may raise), else None."""
    if isinstance(error, pytest.skip.Exception):
        return str(error.msg or "skipped")
    if isinstance(error, BaseExceptionGroup):
        skips, others = error.split(pytest.skip.Exception)
        if others is None and skips is not None:
            first = skips.exceptions[0]
            return skip_message(first) if isinstance(first, (pytest.skip.Exception, BaseExceptionGroup)) else "skipped"
    return None
