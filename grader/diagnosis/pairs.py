"""A bounded two-edit search: two slips at once, from the pairs of operator kinds real code shows together.

A generated variant carries one edit. Some real mistakes are two (the book's ``softmax_naive``: no max
subtracted, and the sum over dim 0), and no single edit gives their answers. ``two_edits`` combines the
node edits of one definition two at a time, only for the pairs of kinds listed in ``pairs.yaml`` (each with
why and the code that shows it), at most ``MAX_PAIRS_PER_DEFINITION`` per definition. Diagnosis tries these
variants only for an exercise that no single variant explains (``diagnose.Diagnoser.diagnose``), so a pair
never takes the place of a simpler name.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from grader.diagnosis.operators import REDUCTIONS
from grader.diagnosis.syntax import Edit, method, src
from grader.files import read_yaml

PAIRS_FILE = Path(__file__).resolve().parent / "pairs.yaml"
TWO_EDITS = "two"  # the operator name of a pair variant
# A dim edit joins a pair only on a reduction: the pairs real code shows are a normalisation gone wrong, and a
# transpose's dims with anything else are edits no one makes (and replays no one needs).
PAIRED_DIMS = frozenset({*REDUCTIONS, "max", "min"})
# Every pair variant is built and replayed when its exercise fails and no single variant fits, so their number
# is kept near what one function's single edits cost; the listed pairs need no more (softmax: the max not
# subtracted times its two reductions' dims and keepdims, 16).
MAX_PAIRS_PER_DEFINITION = 16


@dataclass(frozen=True)
class Slotted:
    """A node edit with where it sits in the definition: parent, field, index in the field's list (or None)."""

    parent: ast.AST
    field: str
    index: int | None
    original: ast.AST
    edit: Edit
    operator: str


@functools.cache
def listed_pairs(path: Path = PAIRS_FILE) -> tuple[tuple[str, str], ...]:
    """The pairs of operator kinds the search combines, as ``pairs.yaml`` lists them."""
    data = read_yaml(path)
    return tuple((str(p["kinds"][0]), str(p["kinds"][1])) for p in data.get("pairs", ()))


def two_edits(definition: ast.AST, edits: list[Slotted],
              pairs: tuple[tuple[str, str], ...] | None = None) -> Iterator[tuple[str, str, str, str]]:
    """(source, operator, title, fix) for each pair of edits of listed kinds at two separate sites (neither
    inside the other), first ``MAX_PAIRS_PER_DEFINITION`` only."""
    made = 0
    edits = [e for e in edits if e.operator != "dim" or method(e.original) in PAIRED_DIMS]
    for first_kind, second_kind in listed_pairs() if pairs is None else pairs:
        for a in (e for e in edits if e.operator == first_kind):
            inside_a = {id(n) for n in ast.walk(a.original)}
            for b in (e for e in edits if e.operator == second_kind):
                if id(b.original) in inside_a or id(a.original) in {id(n) for n in ast.walk(b.original)}:
                    continue
                if made >= MAX_PAIRS_PER_DEFINITION:
                    return
                made += 1
                yield (_both(definition, a, b), TWO_EDITS, f"{a.edit.title}, and {b.edit.title}",
                       f"{a.edit.fix} {b.edit.fix}")


def _both(root: ast.AST, a: Slotted, b: Slotted) -> str:
    """``root``'s source with both edits applied: swapped in place, unparsed, put back."""
    _put(a, a.edit.node)
    _put(b, b.edit.node)
    try:
        return src(root)
    finally:
        _put(b, b.original)
        _put(a, a.original)


def _put(slot: Slotted, node: ast.AST) -> None:
    if slot.index is None:
        setattr(slot.parent, slot.field, node)
    else:
        getattr(slot.parent, slot.field)[slot.index] = node
