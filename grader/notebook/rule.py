"""The rule: which statements run when grading.  A pass in notebook order drops what cannot run
(a missing module, a name only dropped statements set, input(), files, calls that are not pure),
then the names the kept definitions, imports and constants need are followed, with the statements
that finish a kept value in place (``KEY_AXES.append(-1)``); what nothing kept needs is demo code.
The package docstring states the rule in full."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import re

from grader.notebook.reasons import (
    FAILS_WHEN_CALLED,
    IPYTHON_SYNTAX,
    NOT_DEFINED,
    NOT_INSTALLED,
    WITHOUT_CHANGE,
    _call_reason,
    _clip,
    _demo_reason,
    _names,
    _plural,
)
from grader.notebook.statements import (
    Statement,
    _attributes,
    _imported_modules,
    _root_name,
    _star_modules,
)

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
UPPER_CASE = re.compile(r"_*[A-Z][A-Z0-9_]*")
BUILTIN_NAMES = frozenset(dir(builtins))


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
                out.append(self.dropped[i] + self._cost(i, s, needed))
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

    def _star_before(self, before: int) -> bool:
        return any(_star_modules(s.node) for j, s in enumerate(self.statements[:before]) if j not in self.dropped)

    def _star_from_pure_module(self, before: int) -> bool:
        return any(m.split(".")[0] in PURE_MODULES for j, s in enumerate(self.statements[:before])
                   if j not in self.dropped for m in _star_modules(s.node))

    # -- pass 1: what cannot run

    def _cannot_run(self, i: int, s: Statement) -> str:
        if s.ipython:
            return _ipython_reason(s)
        if s.kind == "import":
            missing = [m for m in _imported_modules(s.node) if not _installed(m)] if s.modules or _star_modules(s.node) else []
            if missing and not isinstance(s.node, ast.Try):
                return f"imports {', '.join(missing)}, which is {NOT_INSTALLED}"
            return self._uses_dropped(i, s) or self._impure(i, s.node)
        if s.kind == "definition":
            broken = self._uses_dropped(i, s)
            return f"{broken}, so `{s.node.name}` {NOT_DEFINED}" if broken else ""  # type: ignore[attr-defined]
        if s.kind == "assignment":
            return (self._uses_dropped(i, s) or self._sets_other_module(i, s.node) or self._unset(i, s)
                    or self._impure(i, s.node))
        if s.kind == "mutation":
            return self._not_a_value(i, s) or self._uses_dropped(i, s) or self._unset(i, s) or self._impure(i, s.node)
        if s.kind == "docstring":
            return ""
        value = s.node.value if isinstance(s.node, ast.Expr) else s.node
        return _demo_reason(s.node, self._callee_kind(i, value))

    def _uses_dropped(self, i: int, s: Statement) -> str:
        for name in sorted(s.reads):
            if self.binding(name, i) is None and (j := self.dropped_binding(name, i)) is not None:
                return f"uses `{name}`, which only a dropped statement defines ({self.statements[j].where})"
        return ""

    def _unset(self, i: int, s: Statement) -> str:
        """A change of a name nothing before it sets (``LOG.append(x)``, ``TABLE["k"] = v`` with no
        ``TABLE``), or a value computed from one (``W.extend(q.shape)`` above ``q = ...``): run, it would
        raise NameError and the whole notebook would score nothing."""
        if self._star_before(i):
            return ""  # the names a star import sets are not known
        for verb, names in (("changes", s.finishes), ("uses", s.reads - s.finishes)):
            for name in sorted(names):
                if self.binding(name, i) is None and self.dropped_binding(name, i) is None \
                        and name not in BUILTIN_NAMES:
                    return f"{verb} `{name}`, which no statement before it sets"
        return ""

    def _not_a_value(self, i: int, s: Statement) -> str:
        """An in-place method called on a module, a function or a class (``sys.path.append("..")``,
        ``torch.nn.init.zeros_(w)``) rather than on a value a top-level assignment made: demo code,
        worded as any other call."""
        for name in s.finishes:
            j = self.binding(name, i)
            if j is not None and self.statements[j].kind not in ("assignment", "mutation"):
                return _demo_reason(s.node, self._callee_kind(i, s.node.value))  # type: ignore[attr-defined]
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
        finishers = self._finishers()
        needed = set(roots)
        pending = list(roots)
        while pending:
            i = pending.pop()
            s = self.statements[i]
            wanted = ([self.binding(n, i) for n in s.reads] + [self.binding(n, end) for n in s.later]
                      + finishers.get(i, []))
            for j in wanted:
                if j is not None and j not in needed:
                    needed.add(j)
                    pending.append(j)
        return needed

    def _finishers(self) -> dict[int, list[int]]:
        """For each statement, the kept ones that change in place the value it binds, where they stand
        (``KEY_AXES.append(-1)`` for ``KEY_AXES = []``; each finisher is itself the binding the next one
        changes). Whatever keeps a value keeps these with it, so a name's every reader, an alias set
        before the change included, sees the value the notebook built."""
        out: dict[int, list[int]] = {}
        for m, s in enumerate(self.statements):
            if m in self.dropped:
                continue
            for name in s.finishes:
                j = self.binding(name, m)
                if j is not None:
                    out.setdefault(j, []).append(m)
        return out

    def _users(self, name: str, needed: set[int]) -> list[str]:
        """Kept functions and classes that read ``name`` when called."""
        return sorted({s.node.name for k, s in enumerate(self.statements)  # type: ignore[attr-defined]
                       if k in needed and s.kind == "definition" and name in s.later})

    def _cost(self, i: int, s: Statement, needed: set[int]) -> str:
        """What a dropped statement costs: a kept function that needs a name only it sets fails when called;
        one that uses a value it would have changed in place gets the value without the change."""
        end = len(self.statements)
        for name in sorted(s.binds):
            if self.binding(name, end) is None and (users := self._users(name, needed)):
                return f"; {_your_functions(users)} `{name}`, {FAILS_WHEN_CALLED}"
        for name in sorted(s.finishes):
            if self._changed_until_the_end(name, i) and (users := self._users(name, needed)):
                return f"; {_your_functions(users)} `{name}` {WITHOUT_CHANGE}"
        return ""

    def _changed_until_the_end(self, name: str, i: int) -> bool:
        """Whether the value statement ``i`` changes is still ``name``'s at the end: no kept statement after it
        sets ``name`` anew (one that changes it in place, or updates it, keeps the change)."""
        return not any(k not in self.dropped and name in s.binds and name not in s.finishes
                       for k, s in enumerate(self.statements[i + 1:], start=i + 1))

    def _unused(self, i: int, s: Statement, needed: set[int]) -> str:
        names = sorted(s.binds)
        if s.kind not in ("assignment", "mutation") or not names:
            return "demo code: not run when grading"
        for name in names:
            j = self.binding(name, len(self.statements))
            if j is not None and j != i and j in needed:
                return (f"demo code: `{name}` is set again later ({self.statements[j].where}), "
                        "and that is the one your functions use")
        shown = _names(names)
        return f"demo code: {shown} {'is' if len(names) == 1 else 'are'} used by none of your functions"


def _ipython_reason(s: Statement) -> str:
    """IPython syntax (a magic, a shell escape, a help line) runs only in IPython: the statement holding
    it is not run, and a definition holding it is not defined."""
    if s.kind == "definition":
        return f"uses IPython syntax ({s.ipython}), which only runs in IPython, so `{s.node.name}` {NOT_DEFINED}"  # type: ignore[attr-defined]
    if s.ipython.endswith(f", line {s.line}"):
        return IPYTHON_SYNTAX
    return f"{IPYTHON_SYNTAX} ({s.ipython})"


def _your_functions(users: list[str]) -> str:
    """``your function `f` uses``, ``your functions `f` and `g` use``."""
    return f"your {_plural('function', users)} {_names(users)} {'uses' if len(users) == 1 else 'use'}"


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


def _is_constant(s: Statement) -> bool:
    return any(UPPER_CASE.fullmatch(name) for name in s.binds)


def _installed(module: str) -> bool:
    if module == "__future__":
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
