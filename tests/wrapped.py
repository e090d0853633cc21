"""One exercise of a reference made to hand its return through a helper of the generated source: how the
families build a submission whose one function (or one module's forward) returns something else
(``tests/test_returns.py``: a malformed value; ``tests/test_nonfinite.py``: NaN or inf placed in it)."""

from __future__ import annotations

import ast

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.corpus_cases import FILENAME, REFERENCE

FUNCTION_WRAPPER = '''
_wrapped_{exercise} = {exercise}


def {exercise}(*args, **kwargs):
    return {helper}(_wrapped_{exercise}(*args, **kwargs))
'''

MODULE_WRAPPER = '''
_wrapped_forward = {exercise}.forward


def _wrapping_forward(self, *args, **kwargs):
    return {helper}(_wrapped_forward(self, *args, **kwargs))


{exercise}.forward = _wrapping_forward
'''


def wrapper(exercise: str, helper: str) -> str:
    """Source that, appended to a reference defining ``exercise``, passes what it returns through ``helper``:
    a module's forward for a class (a capitalised contract name), else the function itself."""
    template = MODULE_WRAPPER if exercise[:1].isupper() else FUNCTION_WRAPPER
    return template.format(exercise=exercise, helper=helper)


def module_wrapper(exercise: str, helper: str) -> str:
    """The forward of class ``exercise`` passed through ``helper``, whatever the name's case."""
    return MODULE_WRAPPER.format(exercise=exercise, helper=helper)


def callers(assignment: str) -> dict[str, set[str]]:
    """For each top-level function or class of the reference: the ones that call it, directly or not. A family
    member grades with the checks of its exercise and of these (``api.Grader(exercises=...)``): no other check
    calls what the member changed."""
    tree = ast.parse(REFERENCE[assignment].read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    uses = {name: {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in defs and x.id != name}
            for name, node in defs.items()}
    result: dict[str, set[str]] = {name: set() for name in defs}
    for name in defs:
        todo = [name]
        while todo:
            callee = todo.pop()
            for caller, called in uses.items():
                if callee in called and caller not in result[name]:
                    result[name].add(caller)
                    todo.append(caller)
    return result


def grade_family(server: Any, folder: Path, members: Iterable[Any],
                 judged: Callable[[Any], frozenset[str] | None]) -> dict[str, Any]:
    """Each member (``assignment``, ``id``, ``source()``) graded once, by id: one warm grader per assignment and
    set of judged exercises (``judged(member)``: the exercises whose checks run, None for every one)."""
    from grader import api

    groups: dict[tuple[str, frozenset[str] | None], list[Any]] = {}
    for member in members:
        groups.setdefault((member.assignment, judged(member)), []).append(member)
    graded: dict[str, Any] = {}
    for (assignment, exercises), group in sorted(groups.items(), key=lambda g: (g[0][0], sorted(g[0][1] or ()))):
        with api.Grader(assignment, server=server, exercises=exercises) as grader:
            for member in group:
                path = folder / member.id.replace("/", "_") / FILENAME[assignment]
                path.parent.mkdir(parents=True)
                path.write_text(member.source(), encoding="utf-8")
                graded[member.id] = grader.grade(path)
    return graded
