"""What one top-level statement is (definition, import, assignment, mutation, docstring, other) and the
module names it sets, reads and changes in place, from its AST alone: the facts the rule (``rule.py``)
decides on."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# Methods that change a list, dict, set or deque in place: called alone at the top level on a name,
# they finish the value the name holds (``KEY_AXES.append(-1)``, ``CFG.update(mask_value=-1e9)``).
MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",  # list
    "update", "setdefault", "popitem",  # dict
    "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update",  # set
    "appendleft", "extendleft", "popleft", "rotate",  # collections.deque
})
# torch's in-place tensor methods end in one underscore: ``MASK.tril_()``, ``W.mul_(2)``, ``B.fill_(0)``.
IN_PLACE = re.compile(r"[a-z][a-z0-9_]*[a-z0-9]_")


@dataclass(frozen=True)
class Statement:
    """One top-level statement of a code cell, with the names it sets and reads."""

    cell: int
    line: int  # its first line in the cell, decorators included
    text: str  # its source
    node: ast.stmt
    kind: str  # definition | import | assignment | mutation | docstring | other
    binds: frozenset[str] = frozenset()
    finishes: frozenset[str] = frozenset()  # names whose value it changes in place (or updates: ``x += 1``)
    reads: frozenset[str] = frozenset()  # names read when the statement runs
    later: frozenset[str] = frozenset()  # names a function or class reads when it is called
    modules: dict[str, str] = field(default_factory=dict, compare=False)  # import: name -> dotted module path
    ipython: str = ""  # the IPython syntax it holds and where (``\`!ls\`, line 2``): it cannot run when grading
    written: str = ""  # its first line as the student wrote it, where IPython rewrote it (``x = !ls``)

    @property
    def code(self) -> str:
        if self.written:
            return self.written
        return self.text.strip().splitlines()[0].strip()[:120] if self.text.strip() else ""

    @property
    def where(self) -> str:
        return f"cell {self.cell}, line {self.line}"


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
        return Statement(**base, kind="assignment", binds=_assigned_names(node), reads=frozenset(_reads(node)),
                         finishes=_updated_names(node))
    if (name := _mutated_name(node)) is not None:
        return Statement(**base, kind="mutation", binds=frozenset({name}), reads=frozenset(_reads(node)),
                         finishes=frozenset({name}))
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
    for _, targets in _assignment_targets(node):
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                    names.add(t.id)
            root = _root_name(target)
            if isinstance(target, (ast.Subscript, ast.Attribute)) and root:
                names.add(root)
    return frozenset(names)


def _mutated_name(node: ast.stmt) -> str | None:
    """The name a call of an in-place method changes, for a statement that is only that call
    (``KEY_AXES.append(-1)``, ``CFG["axes"].extend(...)``, ``MASK.tril_()``); None for anything else,
    a literal's method included. Whether the name holds a value of the student's (not a module) is the
    rule's to decide."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)):
        return None
    method = node.value.func.attr
    if method not in MUTATORS and not IN_PLACE.fullmatch(method):
        return None
    return _root_name(node.value.func.value)


def _updated_names(node: ast.AST) -> frozenset[str]:
    """The names an assignment updates rather than sets: ``TABLE`` in ``TABLE["k"] = v`` or
    ``CFG.scale = 2``, ``SCALE`` in ``SCALE *= 2``. Each must hold a value already."""
    names: set[str] = set()
    for stmt, targets in _assignment_targets(node):
        for target in _unpacked(targets):
            root = _root_name(target) if isinstance(target, (ast.Subscript, ast.Attribute)) else None
            if root:
                names.add(root)
            elif isinstance(stmt, ast.AugAssign) and isinstance(target, ast.Name):
                names.add(target.id)
    return frozenset(names)


def _assignment_targets(node: ast.AST) -> list[tuple[ast.stmt, list[ast.expr]]]:
    """Every assignment statement inside ``node`` (plain, augmented, annotated) with its targets."""
    found: list[tuple[ast.stmt, list[ast.expr]]] = []
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Assign):
            found.append((stmt, list(stmt.targets)))
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            found.append((stmt, [stmt.target]))
    return found


def _unpacked(targets: list[ast.expr]) -> list[ast.expr]:
    """Assignment targets with tuples and lists unpacked: ``a``, ``TABLE["k"]`` for ``a, TABLE["k"] = ...``."""
    out: list[ast.expr] = []
    pending = list(targets)
    while pending:
        target = pending.pop(0)
        if isinstance(target, (ast.Tuple, ast.List)):
            pending[:0] = target.elts
        elif isinstance(target, ast.Starred):
            pending.insert(0, target.value)
        else:
            out.append(target)
    return out


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


def _imported_modules(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module.split(".")[0]] if node.module and not node.level else ["(a relative import)"]
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    return []
