"""Which exercises a shared check runs for, read from assignments.yaml, never from a list in the checks.

A check shared by several exercises (``test_common.py``, the gate in ``test_work.py``) takes a parameter
``fn``: ``per_exercise`` parametrises it with every exercise that configures it, in config order, each
parameter marked with its exercise. The assignment is the one the judge grades (``ASSIGNMENT``, put in
pytest's stash by ``grader.session.plugin``); a plain pytest run of a check package (no judge) reads the
default config and finds the assignment whose ``checks:`` is the package.
"""

from __future__ import annotations

from typing import Sequence

import pytest

from grader.config import AssignmentConfig, ConfigError, ExerciseConfig, load_config

# The full assignment the checks are collected for (all its checks, hidden included, even when the judge
# runs only the visible ones: the judge deselects the rest, so the count of hidden checks is known).
ASSIGNMENT = pytest.StashKey[AssignmentConfig]()


def assignment_for(config: pytest.Config, package: str) -> AssignmentConfig:
    """The assignment graded by the checks of ``package`` (``grader.checks.attention`` or ``attention``)."""
    found = config.stash.get(ASSIGNMENT, None)
    if found is not None:
        return found
    name = package.rsplit(".", 1)[-1]
    for assignment in load_config().assignments.values():
        if assignment.checks_package == name:
            return assignment
    raise ConfigError(f"no assignment in assignments.yaml has `checks: {name}`")


def exercise(assignment: AssignmentConfig, name: str) -> ExerciseConfig:
    """``name``'s config; a grader bug (a check for an exercise the config does not have) says so."""
    found = assignment.exercise(name)
    if found is None:
        raise AssertionError(f"`{name}` is not an exercise of {assignment.id!r} in assignments.yaml (a grader bug: report it)")
    return found


def per_exercise(metafunc: pytest.Metafunc, package: str, extra: Sequence[str] = (), extra_name: str = "") -> None:
    """Parametrise ``metafunc``'s ``fn`` (and ``extra_name`` over ``extra``) with the exercises that configure
    the test, ids ``<exercise>`` or ``<exercise>-<extra>`` as before; nothing when the test takes no ``fn``."""
    if "fn" not in metafunc.fixturenames:
        return
    assignment = assignment_for(metafunc.config, package)
    names = [ex.name for ex in assignment.exercises_with(metafunc.function.__name__)]
    if not extra_name:
        metafunc.parametrize("fn", [pytest.param(n, id=n, marks=pytest.mark.exercise(n)) for n in names])
        return
    metafunc.parametrize(f"fn, {extra_name}", [pytest.param(n, e, id=f"{n}-{e}", marks=pytest.mark.exercise(n))
                                               for n in names for e in extra])
