"""Reading a notebook: nbformat's cells -> each code cell's top-level statements.

IPython syntax is blanked (line magics, shell escapes, help lines) or, for a cell magic other
than the timing ones, the cell is set aside; a cell that does not parse is reported in ``failed``
and the other cells still count.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from grader.notebook.statements import Statement, _statement
from grader.scorecard import CellNote

KEPT_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


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


def _cell_statements(source: str, number: int, notes: list[CellNote], failed: list[CellNote]) -> list[Statement]:
    """The cell's top-level statements; magics are noted in ``notes``, a cell that cannot run in ``failed``."""
    lines, offset, why = _python_lines(source, number, notes)
    if why:
        failed.append(CellNote(number, 1, _first_line(lines), why))
        return []
    text = "\n".join(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        failed.append(CellNote(number, (exc.lineno or 1) + offset, _line(lines, exc.lineno),
                               f"syntax error: {exc.msg}; this cell was not run, the others were"))
        return []
    except (ValueError, RecursionError, MemoryError) as exc:
        failed.append(CellNote(number, 1 + offset, _first_line(lines),
                               f"this cell cannot be parsed ({type(exc).__name__}); it was not run, the others were"))
        return []
    out = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        out.append(_statement(node, number, start + offset, _source_of(node, start, tree, lines, text)))
    return out


def _source_of(node: ast.stmt, start: int, tree: ast.Module, lines: list[str], text: str) -> str:
    """The statement's own text: whole lines, unless it shares a line with another (``x = 1; print(x)``)."""
    end = node.end_lineno or node.lineno
    shared = any(other is not node and other.lineno <= end and (other.end_lineno or other.lineno) >= start
                 for other in tree.body)
    if shared:
        return ast.get_source_segment(text, node) or ""
    return "\n".join(lines[start - 1: end])


def _python_lines(source: str, number: int, notes: list[CellNote]) -> tuple[list[str], int, str]:
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
            notes.append(CellNote(number, i + offset, stripped[:120], "IPython magic or shell command: not Python"))
            out.append("")
        else:
            out.append(line)
    return out, offset, ""


def _line(lines: list[str], lineno: int | None) -> str:
    return lines[lineno - 1].strip()[:120] if lineno and 0 < lineno <= len(lines) else ""


def _first_line(lines: list[str]) -> str:
    return next((line.strip()[:120] for line in lines if line.strip()), "")
