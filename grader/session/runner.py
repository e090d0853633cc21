"""Run one collected check as pytest's runtest protocol would, without its per-test hooks and reports.

pytest's protocol (``_pytest.runner.runtestprotocol``) wraps each phase of a test (set-up, call,
tear-down) in a ``CallInfo``, builds a ``TestReport`` for each, writes ``PYTEST_CURRENT_TEST`` into the
environment three times, and dispatches about a dozen hooks through pluggy. Over the 133 checks of a
grade that was ~55 ms of the judge's ~190 ms of CPU (``bench/profile_grade.py``), and the judge read none
of it: a verdict needs only the exception that ended the check. So the judge drives the phases itself:

* set-up through pytest's own ``SetupState`` (the session's): fixture scopes, caching, parametrisation
  and finalizers stay pytest's, exactly as under its protocol. Only the plainest values are handed over
  first (``plain_fixtures``): a direct parameter (``fn``, ``dtype``) and a function-scoped fixture of the
  judge's own plugin that takes nothing and tears nothing down (``student``, ``reference``...). pytest
  looked each up, ran it through a hook and registered its finish, ~400 times a grade (~20 ms); its own
  ``_fillfixtures`` skips a name already in ``item.funcargs``, and the values are the same calls;
* the call through ``item.runtest()``, which is ``pytest_pyfunc_call``: the check runs with its fixtures;
* tear-down toward the next item, again through the ``SetupState``.

What each phase raised is kept; nothing else is recorded. ``tests/test_runner.py`` grades the same
submissions through this and through pytest's own protocol and requires the same verdicts, so a pytest
release that changes ``SetupState`` shows there.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from _pytest.python import DirectParamFixtureDef

PLAIN = pytest.StashKey[tuple[tuple[str, bool, Any], ...]]()  # an item's ``plain_fixtures``, worked out once

# pytest's outcomes (skip, fail, xfail) derive from BaseException, not Exception: a check's own exit.
CHECK_OUTCOMES: tuple[type[BaseException], ...] = (Exception, pytest.skip.Exception, pytest.fail.Exception)


@dataclass(frozen=True)
class Ran:
    """How one check ended: ``error`` is what its set-up, call or tear-down raised first (None: passed)."""

    error: BaseException | None
    duration: float


def run_item(item: pytest.Function, nextitem: pytest.Item | None, owner: object | None = None) -> Ran:
    """Set up ``item``'s fixtures, call it, tear down what ``nextitem`` does not share; what raised first.
    ``owner``: the plugin whose plain fixtures are handed over directly (``plain_fixtures``)."""
    state = item.session._setupstate
    if not item._request:  # the item ran before (once per submission): a fresh request, as pytest would make
        item._initrequest()

    def set_up() -> None:
        if owner is not None:
            for name, is_param, value in plain_fixtures(item, owner):
                item.funcargs[name] = value if is_param else value()
        state.setup(item)

    start = time.perf_counter()
    try:
        error = _raised(set_up)
        if error is None:
            error = _raised(item.runtest)
        torn = _raised(lambda: state.teardown_exact(nextitem))
    finally:
        item._request = False  # funcargs and the request go, as at the end of pytest's protocol
        item.funcargs = None
    return Ran(error if error is not None else torn, time.perf_counter() - start)


def plain_fixtures(item: pytest.Function, owner: object) -> tuple[tuple[str, bool, Any], ...]:
    """The names of ``item``'s arguments set-up may fill without pytest's fixture machinery, in pytest's
    order: ``(name, True, value)`` for a direct parameter, ``(name, False, fixture)`` for a function-scoped
    fixture of ``owner`` that takes no argument and is no generator (nothing to tear down). Whatever else
    (conftest fixtures, a session scope, a fixture asking for others) stays pytest's. The fixture found is
    the one pytest would use for the item itself (the last definition, overrides included)."""
    found = item.stash.get(PLAIN, None)
    if found is not None:
        return found
    defs = item._fixtureinfo.name2fixturedefs
    params = getattr(getattr(item, "callspec", None), "params", {})
    plain = []
    for name in item.fixturenames:
        chain = defs.get(name)
        if not chain or chain[-1].scope != "function":
            continue
        fixture = chain[-1]
        if isinstance(fixture, DirectParamFixtureDef) and name in params:
            plain.append((name, True, params[name]))
        elif (getattr(fixture.func, "__self__", None) is owner and not fixture.argnames
              and not inspect.isgeneratorfunction(fixture.func)):
            plain.append((name, False, fixture.func))
    item.stash[PLAIN] = found = tuple(plain)
    return found


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
