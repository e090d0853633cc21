"""Which exercise calls which, read from the reference's source (parsed, never run).

A wrong ``causal_mask`` fails the checks of ``attention`` and ``multi_head_attention`` too, which call it. A
sentence that names suspects ("the checks that failed point at ...") names only the failing exercises that
call no other failing one; the rest failed through what they call. The same graph holds ``assignments.yaml``
to call order (``grader.authoring.completeness``: every exercise listed after the ones it calls), so the
first exercise on a card that lost points is the root cause the gradebook leads with.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

Graph = Mapping[str, frozenset[str]]  # exercise -> the other exercises it calls, directly or not


def direct_calls(source: str, names: Iterable[str]) -> dict[str, frozenset[str]]:
    """For each of ``names`` defined at the top of ``source``: the other ``names`` its body refers to."""
    wanted = set(names)
    found: dict[str, frozenset[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in wanted:
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            found[node.name] = frozenset((used & wanted) - {node.name})
    return found


def call_graph(source: str, names: Iterable[str]) -> dict[str, frozenset[str]]:
    """``direct_calls`` closed over: everything each exercise reaches through the others."""
    direct = direct_calls(source, names)
    graph: dict[str, frozenset[str]] = {}
    for name in direct:
        seen: set[str] = set()
        todo = list(direct[name])
        while todo:
            callee = todo.pop()
            if callee not in seen and callee != name:
                seen.add(callee)
                todo.extend(direct.get(callee, ()))
        graph[name] = frozenset(seen)
    return graph


def of_reference(reference: Path | None, names: Iterable[str]) -> dict[str, frozenset[str]]:
    """The graph of an assignment's reference; empty where there is none to read (a student kit ships none)
    or it cannot be parsed: every failing exercise is then its own suspect."""
    if reference is None:
        return {}
    try:
        return call_graph(reference.read_text(encoding="utf-8"), names)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return {}


@functools.cache
def of_course(assignment: str) -> Graph:
    """The graph of ``assignment`` in the course's own ``assignments.yaml`` (what a page that only has a card
    can reach); empty where the course has no such assignment or no reference."""
    from grader.config import ConfigError, DEFAULT_CONFIG, load_config

    try:
        config = load_config(DEFAULT_CONFIG)
    except (ConfigError, OSError):
        return {}
    found = config.assignments.get(assignment)
    if found is None:
        return {}
    return of_reference(found.reference, [ex.name for ex in found.exercises])


def suspects(failed: Iterable[str], graph: Graph) -> set[str]:
    """The failing exercises that call no other failing exercise: the ones whose own code the checks point at."""
    failing = set(failed)
    return {name for name in failing if not (graph.get(name, frozenset()) & failing)}
