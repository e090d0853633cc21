"""The order in which a mistake's answers are compared with the student's: those already worked out first.

``Diagnoser._gives`` asks whether a mistake gives *every* answer the student gave: a conjunction, so the order of
the requests changes what it costs, never what it says. An answer the diagnoser already holds for the mistake
(worked out for an earlier card of the same judge: the checks' inputs are seeded, so most cards ask the same
questions) costs one comparison; any other costs a replay of trusted code, a module probe several milliseconds.
Most mistakes are ruled out by the first answer unlike the student's, so comparing the held answers first rules
many out without a replay, and answers worked out for one card are reused by the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item", bound=tuple)  # (request, its digest, the student's answer): ``diagnose.Evidence``


def held_first(evidence: Sequence[Item], held: Callable[[str], bool]) -> list[Item]:
    """``evidence`` with the requests whose answer ``held`` (asked of each request's digest) says is known
    first; within each part the order given (the most discriminating first: ``Diagnoser._discriminating_first``)."""
    return sorted(evidence, key=lambda item: not held(item[1]))
