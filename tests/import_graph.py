"""The package's house read from its import statements: which top-level part of a package (a subpackage
such as ``batch/``, or a module such as ``scorecard.py``) imports which, and where.

Read with ``ast``, never by importing: every import counts wherever it stands (inside a function, under
``TYPE_CHECKING``, ``importlib.import_module("pkg.x")`` with a literal name), since a lazy import is still
an arrow. Relative imports are resolved from the importing file's place. ``tests/test_layout.py`` runs the
rules below on ``grader/`` and on generated trees that break them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

Where = list[str]  # "batch/run.py:31", each place one arrow is drawn
Graph = dict[str, dict[str, Where]]  # part -> the parts it imports -> where


def parts(root: Path) -> dict[str, bool]:
    """The top-level parts of the package at ``root``: name -> whether it is a subpackage."""
    found = {p.name: True for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    found.update({p.stem: False for p in root.glob("*.py") if p.name != "__init__.py"})
    return found


def _imported(node: ast.AST, package: str, here: tuple[str, ...]) -> list[str]:
    """The dotted names one node imports (``package.x.y``), relative ones resolved against ``here``
    (the importing module's own package, as dotted parts). Names outside ``package`` are returned too."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = here[: len(here) - (node.level - 1)] if node.level - 1 <= len(here) else ()
            module = ".".join((*base, *([node.module] if node.module else [])))
        else:
            module = node.module or ""
        # ``from pkg import batch`` imports the subpackage; ``from pkg.batch import run`` the module run:
        # both name the part through the first component after the package, so the names are added.
        return [module, *(f"{module}.{a.name}" for a in node.names if a.name != "*")]
    if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return [node.args[0].value]
    return []


def import_graph(root: Path) -> Graph:
    """Every arrow between the top-level parts of the package at ``root`` (its folder's name is the
    package's name), with the file and line of each import that draws it."""
    package = root.name
    known = parts(root)
    graph: Graph = {name: {} for name in known}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts:
            continue
        owner = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if owner not in known:  # a folder without __init__.py: data, not a part
            continue
        here = (package, *rel.parts[:-1])  # the importing module's package
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = set()
            for name in _imported(node, package, here):
                dotted = name.split(".")
                if len(dotted) > 1 and dotted[0] == package and dotted[1] in known:
                    targets.add(dotted[1])
            for target in sorted(targets - {owner}):
                graph[owner].setdefault(target, []).append(f"{rel.as_posix()}:{node.lineno}")
    return graph


def back_arrows(graph: Mapping[str, Mapping[str, Where]], forbidden: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import that draws a forbidden arrow (``forbidden[a]``: what part ``a`` must not import), one
    line each: ``export -> batch (export/command.py:176)``."""
    out = []
    for part, below in forbidden.items():
        for target in sorted(set(below)):
            for where in graph.get(part, {}).get(target, []):
                out.append(f"{part} -> {target} ({where})")
    return out


def cycles(graph: Mapping[str, Mapping[str, Where]], among: Iterable[str]) -> list[list[str]]:
    """The import cycles among the parts ``among`` (arrows through other parts are followed too, so a
    cycle that passes through a module is found), each as the strongly connected parts, sorted.
    Tarjan's algorithm, iterative: a package's graph is small but recursion depth is no rule to rely on."""
    chosen = set(among)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 and chosen & set(component):
                    found.append(sorted(component))
    return sorted(found)
