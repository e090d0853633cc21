"""Reporting what was dropped: the wording of each reason a statement is not run, and which
notes are worth showing the student every time (``matters``)."""

from __future__ import annotations

import ast

from grader.notebook.statements import _is_main_check
from grader.scorecard import CellNote

IPYTHON_SYNTAX = "IPython magic or shell command: not Python"  # the note on a statement IPython rewrote

# Phrases that mark a note about code the student's definitions need (see ``matters``).
FAILS_WHEN_CALLED = "so it fails when called"
NOT_DEFINED = "is not defined when grading"
NOT_INSTALLED = "not installed where grading runs"
WITHOUT_CHANGE = "without this change"  # a kept function uses a value a dropped statement would have changed


def matters(note: CellNote) -> bool:
    """Whether a dropped statement costs the student's definitions something (worth showing each time):
    a missing import, a definition left out, a name a kept function needs, or a change to a value one uses."""
    return any(mark in note.reason for mark in (FAILS_WHEN_CALLED, NOT_DEFINED, NOT_INSTALLED, WITHOUT_CHANGE))


def _demo_reason(node: ast.stmt, callee: tuple[str, str]) -> str:
    """Why a statement that is not a definition, an import or an assignment is not run."""
    if isinstance(node, ast.Expr):
        kind, name = callee
        if kind in ("input", "file"):
            return _call_reason(kind, name)
        if kind in ("function", "class"):
            return f"calls your {kind} `{name}`: demo code, not run when grading"
        if kind:
            return f"demo code: a call of `{name}`, not run when grading"
        return "demo code: shows a value, not run when grading"
    if isinstance(node, ast.Assert):
        return "a test (`assert`): not run when grading; the grader's own checks test your functions"
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return "demo code: a loop, not run when grading"
    if isinstance(node, ast.If) and _is_main_check(node.test):
        return '`if __name__ == "__main__":` runs only when the file is run as a script, not when grading'
    words = {ast.With: "a `with` block", ast.AsyncWith: "a `with` block", ast.If: "an `if` block",
             ast.Try: "a `try` block", ast.Delete: "`del`", ast.Raise: "`raise`"}
    return f"demo code: {words.get(type(node), 'a top-level statement')}, not run when grading"


def _call_reason(kind: str, name: str) -> str:
    if kind == "input":
        return f"asks for input (`{name}()`), which nobody types when grading"
    return f"reads or writes a file (`{name}`), which is not there when grading"


def _plural(word: str, items: list[str]) -> str:
    return word if len(items) == 1 else word + "s"


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names[:4]] + ([f"{len(names) - 4} more"] if len(names) > 4 else [])
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
