"""A notebook as the grader reads it: the code a student defined, not the demos they ran.

The rule (also in the README). It follows names: what the definitions need is
kept, not what merely looks harmless.

* Cells count top to bottom, as when run in order, so a later definition
  replaces an earlier one. Cells are numbered from 1 over all cells, markdown
  and raw cells included, as the notebook shows them from the top.
* Each code cell is read as IPython reads it, by IPython's own transformer
  (``IPython.core.inputtransformer2``): what IPython rewrites is IPython
  syntax, everything else is the Python it runs (an indented cell dedented,
  pasted ``>>>`` prompts stripped). A statement holding IPython syntax (line
  magics ``%matplotlib inline``, shell escapes ``!pip install x`` and
  ``files = !ls``, help lines ``?obj``, ``obj?``, ``obj??``) is not run, and
  a name only it sets is not defined; a function with such a line in its body
  is not defined. A comment, a string or a docstring that ends in ``?`` is
  Python. A ``%%time`` or ``%%capture`` cell keeps its body, read the same
  way; any other cell magic (``%%timeit``, whose body keeps no definition in
  Jupyter either, ``%%bash``, ``%%html``...) drops the cell.
* Each code cell is parsed alone: a cell with a syntax error is dropped and
  reported with its number and the line in the cell; the other cells count.
  A ``from __future__`` import may stand at the top of any cell, or anywhere
  at its top level: as in Jupyter, it applies from there on.
* Kept: every function and class definition, imports of modules installed
  where grading runs (and ``try: import x`` / ``except ImportError:`` blocks),
  docstrings.
* A top-level assignment is kept when a kept function or class uses a name it
  sets, or a kept assignment does (transitively), or when it sets an
  UPPER_CASE name (a constant). The binding used is the one in effect: the
  last kept one before a statement that reads it, and for a function's body,
  which runs after every cell, the last kept one in the notebook.
  Assignments include ``x += 1``, ``a, b = ...``, ``x: int = 3``,
  ``TABLE["k"] = v`` and an ``if``/``else`` that only assigns
  (``if torch.cuda.is_available(): device = "cuda"``).
* A change that finishes a value is kept, where it stands in notebook order,
  whenever the statement that set the value is kept: a call of an in-place
  method alone on a name (``KEY_AXES.append(-1)``,
  ``CFG.update(mask_value=-1e9)``), an item or attribute assignment
  (``CFG["k"] = v``) and an augmented assignment (``SCALE *= 2``). Each change
  is the binding the next one finishes, and a function that reads the value
  through an alias set before the change sees it too. The in-place methods:
  those of list, dict, set and deque (``append``, ``extend``, ``insert``,
  ``remove``, ``pop``, ``clear``, ``sort``, ``reverse``, ``update``,
  ``setdefault``, ``popitem``, ``add``, ``discard``, the set ``*_update``
  methods, ``appendleft``, ``extendleft``, ``popleft``, ``rotate``) and
  torch's, whose names end in one ``_`` (``MASK.tril_()``). Such a call on a
  module, a function or a class (``sys.path.append("..")``) is demo code, and
  a change of a demo name (one nothing kept needs) is dropped with it.
* An assignment or a change is dropped all the same when it calls anything
  other than: methods of literals, pure builtins (``float``, ``int``, ``tuple``,
  ``len``, ``sorted``...), pure standard-library modules (``math``,
  ``operator``, ``functools``, ``itertools``, ``collections``...), ``torch``
  and ``numpy`` (but not their file functions: ``torch.load``, ``np.load``...),
  and names kept statements set. So ``input()``, ``open()``,
  ``np.load("tokens.npy")``, ``pd.read_csv(...)``, ``tqdm(...)`` and calls of
  the student's own functions and classes are never run when grading.
* A statement that uses a name only dropped statements set is dropped too
  (``x = torch.randn(1, T, 8)`` after a dropped ``T = int(input())``), and so
  is a definition whose decorators, default values or base classes do. An
  assignment or a change that uses or changes a name no statement before it
  sets (``LOG.append(1)`` with no ``LOG``) is dropped: run, it would raise
  NameError. A dropped change of a value a kept function uses says so
  (``your function `f` uses `CFG` without this change``); the function gets
  the value as it was.
* Everything else is demo code, dropped: calls and expressions (``print``,
  ``plt.show()``, ``torch.manual_seed(0)``), asserts, loops, ``with`` blocks,
  ``if __name__ == "__main__":``, settings of other modules
  (``plt.rcParams[...] = ...``) and assignments nothing kept uses
  (``q = torch.randn(2, 5, 8)`` in a test cell).
* Every statement left out is reported with its cell, its line and why.

cells.py reads the notebook into each cell's statements, statements.py says what
each one is, sets and reads, rule.py decides which run, reasons.py words why
the others do not; :func:`extract` here puts the kept ones back together.
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from grader.notebook.cells import NotebookError, _cell_statements, code_bytes, read
from grader.notebook.ipython import LINE_READINGS, Allowance
from grader.notebook.reasons import matters
from grader.notebook.rule import Decision
from grader.notebook.statements import Statement
from grader.scorecard import CellNote, NotebookReport

__all__ = ["Extracted", "NotebookError", "code_bytes", "extract", "extract_notebook", "matters", "read"]


Place = tuple[int, int]  # (cell, line in that cell) of one line of the graded source


def extract(text: str) -> tuple[str, NotebookReport]:
    """The source to grade (kept statements, cell by cell) and what was left out, and why."""
    extracted = extract_notebook(read(text))
    return extracted.source, extracted.report


class Extracted(NamedTuple):
    """A notebook's graded source and what goes with it.

    ``places``: where each line of the source came from (None for the lines the extraction adds: a
    cell's marker, the blank line between cells), so a line number Python reports in the graded
    source can be said as the student's cell and line. ``units``: the lines of the source where a
    kept ``from __future__`` import (or a run of them) starts. Jupyter compiles each statement alone, with the
    features imported before it, so such an import may stand at the top of any cell and applies
    from there on; the sandbox compiles the source in units that start at these lines, each with
    the features of the units before it (``grader.sandbox.child``), so the program behaves as in
    Jupyter and every line keeps its number."""

    source: str
    report: NotebookReport
    places: tuple[Place | None, ...]
    units: tuple[int, ...]


def extract_notebook(nb: Any, readings: int = LINE_READINGS) -> Extracted:
    """``extract`` for a notebook already read (``read``), with the places and units of its source.
    ``readings``: the line readings its IPython syntax may cost (``grader.notebook.ipython``)."""
    statements: list[Statement] = []
    notes: list[CellNote] = []
    failed: list[CellNote] = []
    code_cells = 0
    allowance = Allowance(readings)
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        code_cells += 1
        statements += _cell_statements(str(cell.get("source", "")), number, failed, allowance)
    reasons = Decision(statements).reasons()
    parts: dict[int, list[Statement]] = {}
    for s, reason in zip(statements, reasons):
        if reason:
            notes.append(CellNote(s.cell, s.line, s.code, reason))
        else:
            parts.setdefault(s.cell, []).append(s)
    source = "\n\n".join(f"# --- cell {n} ---\n" + "\n".join(s.text for s in kept) for n, kept in parts.items())
    places: list[Place | None] = []
    units: list[int] = []
    after_future = False  # imports of features in a row share a unit
    for n, kept in parts.items():
        places += [None] * (2 if places else 1)  # the blank line between cells, then the cell's marker
        for s in kept:
            if _is_future_import(s.node) and not after_future:
                units.append(len(places) + 1)
            after_future = _is_future_import(s.node)
            places += [(n, s.line + i) for i in range(len(s.text.split("\n")))]
    notes.sort(key=lambda n: (n.cell, n.line))
    report = NotebookReport(len(nb.cells), code_cells, tuple(notes), tuple(failed))
    return Extracted(source + "\n", report, tuple(places), tuple(units))


def _is_future_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"
