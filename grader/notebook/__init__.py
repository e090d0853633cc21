"""A notebook as the grader reads it: the code a student defined, not the demos they ran.

The rule (also in the README). It follows names: what the definitions need is
kept, not what merely looks harmless.

* Cells count top to bottom, as when run in order, so a later definition
  replaces an earlier one. Cells are numbered from 1 over all cells, markdown
  and raw cells included, as the notebook shows them from the top.
* IPython line magics, shell escapes and help lines (``%matplotlib inline``,
  ``!pip install x``, ``?obj``, ``obj?``) are blanked. A ``%%time``,
  ``%%timeit`` or ``%%capture`` cell keeps its Python body; any other cell
  magic (``%%bash``, ``%%html``...) drops the cell.
* Each code cell is parsed alone: a cell with a syntax error is dropped and
  reported with its number and the line in the cell; the other cells count.
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
* An assignment is dropped all the same when its value calls anything other
  than: methods of literals, pure builtins (``float``, ``int``, ``tuple``,
  ``len``, ``sorted``...), pure standard-library modules (``math``,
  ``operator``, ``functools``, ``itertools``, ``collections``...), ``torch``
  and ``numpy`` (but not their file functions: ``torch.load``, ``np.load``...),
  and names kept statements set. So ``input()``, ``open()``,
  ``np.load("tokens.npy")``, ``pd.read_csv(...)``, ``tqdm(...)`` and calls of
  the student's own functions and classes are never run when grading.
* A statement that uses a name only dropped statements set is dropped too
  (``x = torch.randn(1, T, 8)`` after a dropped ``T = int(input())``), and so
  is a definition whose decorators, default values or base classes do.
* Everything else is demo code, dropped: calls and expressions (``print``,
  ``plt.show()``, ``torch.manual_seed(0)``), asserts, loops, ``with`` blocks,
  ``if __name__ == "__main__":``, settings of other modules
  (``plt.rcParams[...] = ...``) and assignments nothing kept uses
  (``q = torch.randn(2, 5, 8)`` in a test cell).
* Every statement left out is reported with its cell, its line and why.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import json
import re
from dataclasses import dataclass, field
from typing import Any

from grader.scorecard import CellNote, NotebookReport

KEPT_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
# Calls an assignment's value may make at the top level: they compute, they read no input or file.
PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "hasattr", "hash", "hex", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct", "ord", "pow", "range",
    "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip",
    "property", "staticmethod", "classmethod",
})
PURE_MODULES = frozenset({
    "torch", "numpy", "math", "cmath", "operator", "functools", "itertools", "collections", "string",
    "fractions", "decimal", "statistics", "enum", "typing", "dataclasses", "numbers", "copy", "re",
})
FILE_FUNCTIONS = frozenset({  # in any module: they read or write files, or download them
    "load", "loadtxt", "genfromtxt", "fromfile", "memmap", "from_file", "save", "savez", "savez_compressed",
    "savetxt", "tofile", "fromregex", "open", "DataSource", "hub", "load_state_dict_from_url",
    "download_url_to_file",
})
MODULE_NAMES = frozenset({"__name__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__"})
UPPER_CASE = re.compile(r"_*[A-Z][A-Z0-9_]*")
# Phrases that mark a note about code the student's definitions need (see ``matters``).
FAILS_WHEN_CALLED = "so it fails when called"
NOT_DEFINED = "is not defined when grading"
NOT_INSTALLED = "not installed where grading runs"


class NotebookError(Exception):
    """Not a notebook nbformat can read (one line, for the card)."""


@dataclass(frozen=True)
class Statement:
    """One top-level statement of a code cell, with the names it sets and reads."""

    cell: int
    line: int  # its first line in the cell, decorators included
    text: str  # its source
    node: ast.stmt
    kind: str  # definition | import | assignment | docstring | other
    binds: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()  # names read when the statement runs
    later: frozenset[str] = frozenset()  # names a function or class reads when it is called
    modules: dict[str, str] = field(default_factory=dict, compare=False)  # import: name -> dotted module path

    @property
    def code(self) -> str:
        return self.text.strip().splitlines()[0].strip()[:120] if self.text.strip() else ""

    @property
    def where(self) -> str:
        return f"cell {self.cell}, line {self.line}"


def matters(note: CellNote) -> bool:
    """Whether a dropped statement costs the student's definitions something (worth showing each time):
    a missing import, a definition left out, or a name a kept function needs."""
    return any(mark in note.reason for mark in (FAILS_WHEN_CALLED, NOT_DEFINED, NOT_INSTALLED))


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


def extract(text: str) -> tuple[str, NotebookReport]:
    """The source to grade (kept statements, cell by cell) and what was left out, and why."""
    return extract_notebook(read(text))


def extract_notebook(nb: Any) -> tuple[str, NotebookReport]:
    """``extract`` for a notebook already read (``read``)."""
    statements: list[Statement] = []
    notes: list[CellNote] = []
    failed: list[CellNote] = []
    code_cells = 0
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        code_cells += 1
        statements += _cell_statements(str(cell.get("source", "")), number, notes, failed)
    reasons = Decision(statements).reasons()
    parts: dict[int, list[str]] = {}
    for s, reason in zip(statements, reasons):
        if reason:
            notes.append(CellNote(s.cell, s.line, s.code, reason))
        else:
            parts.setdefault(s.cell, []).append(s.text)
    source = "\n\n".join(f"# --- cell {n} ---\n" + "\n".join(texts) for n, texts in parts.items())
    notes.sort(key=lambda n: (n.cell, n.line))
    report = NotebookReport(len(nb.cells), code_cells, tuple(notes), tuple(failed))
    return source + "\n", report


# ------------------------------------------------------------------ cells into statements


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


def _statement(node: ast.stmt, cell: int, line: int, text: str) -> Statement:
    """What one statement is, sets and reads."""
    base = {"cell": cell, "line": line, "text": text, "node": node}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return Statement(**base, kind="definition", binds=frozenset({node.name}),
                         reads=frozenset(_definition_reads(node)), later=frozenset(_free_names(node)))
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = _import_bindings(node)
        return Statement(**base, kind="import", binds=frozenset(modules), modules=modules)
    if _is_import_block(node):
        modules = {k: v for s in ast.walk(node) if isinstance(s, (ast.Import, ast.ImportFrom))
                   for k, v in _import_bindings(s).items()}
        assigned = _assigned_names(node)
        return Statement(**base, kind="import", binds=frozenset(modules) | assigned, modules=modules,
                         reads=frozenset(_reads(node) - assigned - set(modules)))
    if _is_assignment(node):
        return Statement(**base, kind="assignment", binds=_assigned_names(node), reads=frozenset(_reads(node)))
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return Statement(**base, kind="docstring")
    return Statement(**base, kind="other", binds=_stored_names(node), reads=frozenset(_reads(node)))


def _is_assignment(node: ast.stmt) -> bool:
    """An assignment, or an ``if``/``else`` (not ``if __name__ == "__main__"``) whose branches only assign."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return True
    if isinstance(node, ast.If) and not _is_main_check(node.test):
        return all(isinstance(s, ast.Pass) or _is_assignment(s) for s in node.body + node.orelse)
    return False


def _is_import_block(node: ast.stmt) -> bool:
    """``try: import x`` / ``except ImportError: x = None``: imports, ``pass`` and plain assignments only."""
    if not isinstance(node, ast.Try) or not any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body):
        return False
    blocks = [node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)]
    return all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assign)) for block in blocks for s in block)


def _is_main_check(test: ast.expr) -> bool:
    return "__name__" in {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}


def _assigned_names(node: ast.AST) -> frozenset[str]:
    """The module names an assignment sets or updates (``x``, ``a, b``, ``TABLE`` in ``TABLE["k"] = v``)."""
    names: set[str] = set()
    for stmt in ast.walk(node):
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                    names.add(t.id)
            root = _root_name(target)
            if isinstance(target, (ast.Subscript, ast.Attribute)) and root:
                names.add(root)
    return frozenset(names)


def _reads(node: ast.AST) -> set[str]:
    """Module names a top-level statement reads when it runs (``x += 1`` reads ``x``; a comprehension's or
    a lambda's own variables are not module names)."""
    loaded: set[str] = set()
    local: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loaded.add(n.id)
        elif isinstance(n, ast.comprehension):
            local |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            loaded.add(n.target.id)
    return loaded - local


def _definition_reads(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """Names a ``def`` or ``class`` statement reads when it runs: decorators, defaults, bases, and a
    class body's own statements (a function's body, a method's included, runs only when it is called)."""
    names: set[str] = set()
    for part in node.decorator_list:
        names |= _reads(part)
    if isinstance(node, ast.ClassDef):
        for part in node.bases + [k.value for k in node.keywords]:
            names |= _reads(part)
        local: set[str] = set()
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names |= _definition_reads(stmt) - local
                local.add(stmt.name)
            else:
                names |= _reads(stmt) - local
                local |= _stored_names(stmt)
        return names
    for default in node.args.defaults + node.args.kw_defaults:
        if default is not None:
            names |= _reads(default)
    return names


def _stored_names(node: ast.AST) -> frozenset[str]:
    """Every name a statement sets anywhere inside (a loop's variable, a ``with`` target, a nested def)."""
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.alias) and n.name != "*":
            names.add((n.asname or n.name).split(".")[0])
    return frozenset(names)


def _free_names(node: ast.AST) -> set[str]:
    """Names a function or class reads that it does not set itself (read when it is called).

    Scopes are flattened: a name set anywhere inside counts as local everywhere inside. That can only
    make a module-level assignment look unused when a nested scope reads what another sets, which
    student code for this lesson does not do.
    """
    loaded: set[str] = set()
    bound: set[str] = set()
    declared: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
    return (loaded - bound) | (loaded & declared)


def _import_bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Names an import sets, each with the dotted path it stands for (``np`` -> ``numpy``)."""
    out: dict[str, str] = {}
    for alias in node.names:
        if isinstance(node, ast.ImportFrom):
            if alias.name != "*":
                out[alias.asname or alias.name] = f"{'.' * node.level}{node.module or ''}.{alias.name}"
        elif alias.asname:
            out[alias.asname] = alias.name
        else:
            top = alias.name.split(".")[0]
            out[top] = top
    return out


def _star_modules(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        return [node.module or ""]
    return []


# ------------------------------------------------------------------ the decision


class Decision:
    """Which statements are kept, and why each other one is not: a pass in notebook order finds the
    statements that cannot run when grading, then the names the kept definitions need are followed."""

    def __init__(self, statements: list[Statement]) -> None:
        self.statements = statements
        self.dropped: dict[int, str] = {}

    def reasons(self) -> list[str]:
        """One reason per statement, '' for a kept one."""
        for i, s in enumerate(self.statements):
            reason = self._cannot_run(i, s)
            if reason:
                self.dropped[i] = reason
        needed = self._needed()
        out = []
        for i, s in enumerate(self.statements):
            if i in self.dropped:
                out.append(self.dropped[i] + self._cost(s, needed))
            elif i in needed:
                out.append("")
            else:
                out.append(self._unused(i, s, needed))
        return out

    # -- names

    def binding(self, name: str, before: int) -> int | None:
        """The statement whose binding of ``name`` is in effect just before statement ``before``
        (the last one not dropped), or None."""
        for j in range(min(before, len(self.statements)) - 1, -1, -1):
            if j not in self.dropped and name in self.statements[j].binds:
                return j
        return None

    def dropped_binding(self, name: str, before: int) -> int | None:
        """The last dropped statement before ``before`` that sets ``name``."""
        for j in range(min(before, len(self.statements)) - 1, -1, -1):
            if j in self.dropped and name in self.statements[j].binds:
                return j
        return None

    def _star_from_pure_module(self, before: int) -> bool:
        return any(m.split(".")[0] in PURE_MODULES for j, s in enumerate(self.statements[:before])
                   if j not in self.dropped for m in _star_modules(s.node))

    # -- pass 1: what cannot run

    def _cannot_run(self, i: int, s: Statement) -> str:
        if s.kind == "import":
            missing = [m for m in _imported_modules(s.node) if not _installed(m)] if s.modules or _star_modules(s.node) else []
            if missing and not isinstance(s.node, ast.Try):
                return f"imports {', '.join(missing)}, which is {NOT_INSTALLED}"
            return self._uses_dropped(i, s) or self._impure(i, s.node)
        if s.kind == "definition":
            broken = self._uses_dropped(i, s)
            return f"{broken}, so `{s.node.name}` {NOT_DEFINED}" if broken else ""  # type: ignore[attr-defined]
        if s.kind == "assignment":
            return self._uses_dropped(i, s) or self._sets_other_module(i, s.node) or self._impure(i, s.node)
        if s.kind == "docstring":
            return ""
        value = s.node.value if isinstance(s.node, ast.Expr) else s.node
        return _demo_reason(s.node, self._callee_kind(i, value))

    def _uses_dropped(self, i: int, s: Statement) -> str:
        for name in sorted(s.reads):
            if self.binding(name, i) is None and (j := self.dropped_binding(name, i)) is not None:
                return f"uses `{name}`, which only a dropped statement defines ({self.statements[j].where})"
        return ""

    def _sets_other_module(self, i: int, node: ast.stmt) -> str:
        """``plt.rcParams["figure.dpi"] = 120``, ``torch.backends.cudnn.benchmark = True``: settings of an
        imported module, for the demos."""
        for stmt in ast.walk(node):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else [])
            for target in targets:
                root = _root_name(target)
                j = self.binding(root, i) if root and isinstance(target, (ast.Subscript, ast.Attribute)) else None
                if j is not None and self.statements[j].kind == "import":
                    return f"changes a setting of `{root}` (`{_clip(ast.unparse(target))}`): demo code, not run when grading"
        return ""

    def _impure(self, i: int, node: ast.AST) -> str:
        """Why a value cannot be computed safely at the top level: the first call that is not pure."""
        for call in _calls(node):
            kind, name = self._callee_kind(i, call)
            if kind in ("input", "file"):
                return _call_reason(kind, name)
            if kind in ("function", "class"):
                return f"computes with your {kind} `{name}`: demo code, not run when grading"
            if kind == "other":
                return (f"calls `{name}`; at the top level only literals, pure builtins such as float() or len(), "
                        "math and torch/numpy functions run when grading")
        return ""

    def _callee_kind(self, i: int, node: ast.AST) -> tuple[str, str]:
        """What a call calls: (pure | input | file | function | class | other | '', its name as written)."""
        if not isinstance(node, ast.Call):
            return "", ""
        written = _clip(ast.unparse(node.func), 40)
        root = _root_name(node.func)
        if root is None:
            return "pure", written  # a method of a literal: "-".join(...), [1, 2].index(2)
        j = self.binding(root, i)
        if j is None:
            if self.dropped_binding(root, i) is not None:
                return "pure", written  # a name only dropped statements set: _uses_dropped says so
            if root == "input":
                return "input", root
            if root == "open":
                return "file", root
            if root in PURE_BUILTINS or (root not in dir(builtins) and self._star_from_pure_module(i)):
                return "pure", written
            return "other", written
        s = self.statements[j]
        if s.kind == "definition":
            return ("class" if isinstance(s.node, ast.ClassDef) else "function"), root
        if s.kind != "import" or root not in s.modules:
            return "pure", written  # a name a kept assignment sets
        dotted = [s.modules[root].lstrip("."), *_attributes(node.func)]
        if any(part in FILE_FUNCTIONS or part.startswith("read_") for part in ".".join(dotted).split(".")):
            return "file", written
        return ("pure" if dotted[0].split(".")[0] in PURE_MODULES else "other"), written

    # -- pass 2: what the kept definitions need

    def _needed(self) -> set[int]:
        end = len(self.statements)
        roots = [i for i, s in enumerate(self.statements) if i not in self.dropped and (
            s.kind in ("definition", "import", "docstring") or (s.kind == "assignment" and _is_constant(s)))]
        needed = set(roots)
        pending = list(roots)
        while pending:
            i = pending.pop()
            s = self.statements[i]
            wanted = [self.binding(n, i) for n in s.reads] + [self.binding(n, end) for n in s.later]
            for j in wanted:
                if j is not None and j not in needed:
                    needed.add(j)
                    pending.append(j)
        return needed

    def _users(self, name: str, needed: set[int]) -> list[str]:
        """Kept functions and classes that read ``name`` when called."""
        return sorted({s.node.name for k, s in enumerate(self.statements)  # type: ignore[attr-defined]
                       if k in needed and s.kind == "definition" and name in s.later})

    def _cost(self, s: Statement, needed: set[int]) -> str:
        """What a dropped statement costs: a kept function that needs a name only it sets fails when called."""
        for name in sorted(s.binds):
            if self.binding(name, len(self.statements)) is None and (users := self._users(name, needed)):
                return f"; your {_plural('function', users)} {_names(users)} {'uses' if len(users) == 1 else 'use'} `{name}`, {FAILS_WHEN_CALLED}"
        return ""

    def _unused(self, i: int, s: Statement, needed: set[int]) -> str:
        names = sorted(s.binds)
        if s.kind != "assignment" or not names:
            return "demo code: not run when grading"
        for name in names:
            j = self.binding(name, len(self.statements))
            if j is not None and j != i and j in needed:
                return (f"demo code: `{name}` is set again later ({self.statements[j].where}), "
                        "and that is the one your functions use")
        shown = _names(names)
        return f"demo code: {shown} {'is' if len(names) == 1 else 'are'} used by none of your functions"


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


def _calls(node: ast.AST) -> list[ast.Call]:
    """The calls a statement makes when it runs: not those inside a lambda, which run only when it is called."""
    out: list[ast.Call] = []
    pending = [node]
    while pending:
        n = pending.pop()
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.Call):
            out.append(n)
        pending.extend(ast.iter_child_nodes(n))
    return out


def _root_name(node: ast.AST) -> str | None:
    """The name a chain starts from: ``torch`` for ``torch.ones(4).tril``, ``TABLE`` for ``TABLE["k"]``;
    None for a literal's method."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _attributes(node: ast.AST) -> list[str]:
    """The attribute names of a call chain, outermost last: ``["random", "randn"]`` for ``np.random.randn``."""
    out: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    return out[::-1]


def _is_constant(s: Statement) -> bool:
    return any(UPPER_CASE.fullmatch(name) for name in s.binds)


def _imported_modules(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module.split(".")[0]] if node.module and not node.level else ["(a relative import)"]
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    return []


def _installed(module: str) -> bool:
    if module == "__future__":
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _plural(word: str, items: list[str]) -> str:
    return word if len(items) == 1 else word + "s"


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names[:4]] + ([f"{len(names) - 4} more"] if len(names) > 4 else [])
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _line(lines: list[str], lineno: int | None) -> str:
    return lines[lineno - 1].strip()[:120] if lineno and 0 < lineno <= len(lines) else ""


def _first_line(lines: list[str]) -> str:
    return next((line.strip()[:120] for line in lines if line.strip()), "")
