"""Reading a notebook: nbformat's cells -> each code cell's top-level statements.

Each cell is read as IPython reads it (``ipython.py``): the statements holding IPython syntax
(magics, shell escapes, help lines) are marked, to be set aside; a cell magic other than
``%%time`` and ``%%capture`` sets the cell aside; a cell that does not parse is reported in
``failed`` and the other cells still count.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from typing import Any

from grader.notebook.ipython import Allowance, ipython_cell
from grader.notebook.statements import Statement, _statement
from grader.scorecard import CellNote


class NotebookError(Exception):
    """Not a notebook nbformat can read (one line, for the card)."""


def read(text: str) -> Any:
    """The notebook as nbformat v4, or NotebookError with one line."""
    import nbformat

    try:
        return nbformat.reads(text, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError, nbformat.validator.ValidationError,
            ValueError, KeyError, AttributeError, TypeError) as exc:
        raise NotebookError(f"the notebook cannot be read: {str(exc).splitlines()[0][:200]}") from None


def code_bytes(nb: Any) -> int:
    """The size of the notebook's code, the code cells' sources (UTF-8): what size limits apply to.
    Saved outputs (plots, printed tensors) and markdown do not count."""
    return sum(len(str(c.get("source", "")).encode("utf-8")) for c in nb.cells if c.get("cell_type") == "code")


def _cell_statements(source: str, number: int, failed: list[CellNote], allowance: Allowance) -> list[Statement]:
    """The cell's top-level statements, as IPython compiles them; a cell that cannot run is noted in ``failed``.

    A statement holding IPython syntax (``%time f(x)``, ``!ls``, ``x = !ls``, ``obj?``, or a function
    whose body has one) is returned marked (``Statement.ipython``): the rule sets it aside, and what it
    defines counts as not defined. Reading the cell is paid from the notebook's ``allowance``."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")  # as Python's compile reads them
    cell = ipython_cell(source, allowance)
    written = source.splitlines()
    if cell.refused:
        failed.append(CellNote(number, 1, _first_line(written), cell.refused))
        return []
    text = cell.python
    lines = text.split("\n")
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        failed.append(CellNote(number, exc.lineno or 1, _line(written, exc.lineno),
                               f"syntax error: {exc.msg}; this cell was not run, the others were"))
        return []
    except (ValueError, RecursionError, MemoryError) as exc:
        failed.append(CellNote(number, 1, _first_line(written),
                               f"this cell cannot be parsed ({type(exc).__name__}); it was not run, the others were"))
        return []
    out = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        end = node.end_lineno or node.lineno
        statement = _statement(node, number, start, _source_of(node, start, tree, lines, text))
        magic = next((m for m in cell.magics if start <= m[0] <= end), None)
        if magic is not None:
            statement = replace(statement, ipython=f"`{magic[2]}`, line {magic[0]}", written=_line(written, start))
        elif (refused := _future_error(node)):
            failed.append(CellNote(number, start, _line(written, start),
                                   f"syntax error: {refused}; this cell was not run, the others were"))
            return []
        out.append(statement)
    return out


def _future_error(node: ast.stmt) -> str:
    """Why Python refuses a statement holding a ``from __future__`` import (an unknown feature, or one
    inside a block), '' when it takes it or holds none. Jupyter compiles each top-level statement
    alone, with the features imported before it, so one at the top level is always at the beginning
    of what is compiled. The statement is compiled here, never run: only the compiler knows its rules."""
    if not any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in ast.walk(node)):
        return ""
    try:
        compile(ast.Module(body=[node], type_ignores=[]), "<cell>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return str(exc.msg)
    return ""


def _source_of(node: ast.stmt, start: int, tree: ast.Module, lines: list[str], text: str) -> str:
    """The statement's own text: whole lines, unless it shares a line with another (``x = 1; print(x)``)."""
    end = node.end_lineno or node.lineno
    shared = any(other is not node and other.lineno <= end and (other.end_lineno or other.lineno) >= start
                 for other in tree.body)
    if shared:
        return ast.get_source_segment(text, node) or ""
    return "\n".join(lines[start - 1: end])


def _line(lines: list[str], lineno: int | None) -> str:
    return lines[lineno - 1].strip()[:120] if lineno and 0 < lineno <= len(lines) else ""


def _first_line(lines: list[str]) -> str:
    return next((line.strip()[:120] for line in lines if line.strip()), "")
