"""A notebook as the grader reads it: the code a student defined, not the demos they ran.

The rule (also in the README):

* Cells count top to bottom, as when run in order, so a later definition
  replaces an earlier one. Cells are numbered from 1 over all cells, markdown
  and raw cells included, as the notebook shows them from the top.
* IPython line magics, shell escapes and help lines (``%matplotlib inline``,
  ``!pip install x``, ``?obj``, ``obj?``) are blanked. A ``%%time``,
  ``%%timeit`` or ``%%capture`` cell keeps its Python body; any other cell
  magic (``%%bash``, ``%%html``...) drops the cell.
* Each code cell is parsed alone: a cell with a syntax error is dropped and
  reported with its number and the line in the cell; the other cells count.
* From each cell, these top-level statements are kept: imports of modules
  installed where grading runs, function and class definitions, and
  assignments whose value calls nothing or only functions of ``torch``,
  ``math`` or ``numpy`` (``EPS = 1e-9``, ``sm = torch.softmax``,
  ``MASK = torch.ones(4, 4).tril()``). Everything else - prints, plots,
  ``input()``, loops, ``sys.exit()``, calls of the student's own functions -
  is demo code: reported, and never run when grading.
"""

from __future__ import annotations

import ast
import importlib.util
import json

from grader.scorecard import CellNote, NotebookReport

KEPT_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
LIBRARIES = frozenset({"torch", "math", "numpy"})
DEMO = "top-level code (a demo): not run when grading"


class NotebookError(Exception):
    """Not a notebook nbformat can read (one line, for the card)."""


def extract(text: str) -> tuple[str, NotebookReport]:
    """The source to grade (kept statements, cell by cell) and what was left out, and why."""
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError, nbformat.validator.ValidationError,
            ValueError, KeyError, AttributeError, TypeError) as exc:
        raise NotebookError(f"the notebook cannot be read: {str(exc).splitlines()[0][:200]}") from None
    parts: list[str] = []
    dropped: list[CellNote] = []
    failed: list[CellNote] = []
    libraries: dict[str, str] = {}  # local name -> library module, from the imports kept so far
    code_cells = 0
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        code_cells += 1
        lines, offset, why = _python_lines(str(cell.get("source", "")), number, dropped)
        if why:
            failed.append(CellNote(number, 1, _first_line(lines), why))
            continue
        source = "\n".join(lines)
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            failed.append(CellNote(number, (exc.lineno or 1) + offset, _line(lines, exc.lineno),
                                   f"syntax error: {exc.msg}; this cell was not run, the others were"))
            continue
        kept = []
        for node in tree.body:
            reason = _reason_to_drop(node, libraries)
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            if reason:
                dropped.append(CellNote(number, start + offset, _line(lines, node.lineno), reason))
            else:
                kept.append("\n".join(lines[start - 1: node.end_lineno]))
                _note_libraries(node, libraries)
        if kept:
            parts.append(f"# --- cell {number} ---\n" + "\n".join(kept))
    report = NotebookReport(len(nb.cells), code_cells, tuple(dropped), tuple(failed))
    return "\n\n".join(parts) + "\n", report


def _python_lines(source: str, number: int, dropped: list[CellNote]) -> tuple[list[str], int, str]:
    """The cell's lines with IPython syntax blanked, the line offset of a cell magic, and why the cell cannot run."""
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    offset = 0
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].split()[0]
        if magic not in KEPT_CELL_MAGICS:
            return lines, 0, f"cell magic {magic}: not Python, not run when grading"
        lines, offset = lines[first + 1:], first + 1
    out = []
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith(("%", "!", "?")) or (stripped.endswith("?") and not stripped.startswith("#")):
            dropped.append(CellNote(number, i + offset, stripped[:120], "IPython magic or shell command: not Python"))
            out.append("")
        else:
            out.append(line)
    return out, offset, ""


def _reason_to_drop(node: ast.stmt, libraries: dict[str, str]) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        missing = [m for m in _imported_modules(node) if not _installed(m)]
        return f"imports {', '.join(missing)}, which is not installed where grading runs" if missing else ""
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        calls = [n for n in ast.walk(node.value) if isinstance(n, ast.Call)]
        if all(_root(c.func) in libraries for c in calls):
            return ""
        return DEMO
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return ""  # a docstring or a bare string: harmless
    if isinstance(node, ast.Try) and all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass))
                                         for block in (node.body, node.orelse, node.finalbody,
                                                       *(h.body for h in node.handlers)) for s in block):
        return ""  # try: import x / except ImportError: ...
    return DEMO


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module.split(".")[0]] if node.module and not node.level else ["(a relative import)"]
    return [alias.name.split(".")[0] for alias in node.names]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _note_libraries(node: ast.stmt, libraries: dict[str, str]) -> None:
    """Remember names bound to torch, math or numpy (``import torch.nn as nn``, ``from torch import nn``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in LIBRARIES:
                libraries[alias.asname or top] = top
    elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in LIBRARIES:
        for alias in node.names:
            libraries[alias.asname or alias.name] = node.module.split(".")[0]


def _root(func: ast.expr) -> str:
    """The name a call chain starts from: ``torch`` for ``torch.ones(4).tril``."""
    while isinstance(func, (ast.Attribute, ast.Call)):
        func = func.value if isinstance(func, ast.Attribute) else func.func
    return func.id if isinstance(func, ast.Name) else ""


def _line(lines: list[str], lineno: int | None) -> str:
    return lines[lineno - 1].strip()[:120] if lineno and 0 < lineno <= len(lines) else ""


def _first_line(lines: list[str]) -> str:
    return next((line.strip()[:120] for line in lines if line.strip()), "")
