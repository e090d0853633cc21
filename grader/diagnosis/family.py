"""The family of generated mistakes: every operator applied at every site of a reference, one edit each.

``variants(source)`` applies the node operators (``operators.OPERATORS``) at every node of every
top-level function and class, and the function-level ones here (a pipeline step doubled or moved,
two parameters swapped, a parameter ignored) to each function; each edit that compiles and changes
the code is a ``Variant``. ``VariantFactory`` builds a variant's module cheaply: the reference's
prelude runs once, and a variant re-executes only the top-level definitions, the edited one in its
edited form, in a fresh namespace, so ``attention`` calls the edited ``softmax``.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from grader.diagnosis.operators import DIMS, OPERATORS
from grader.diagnosis.pairs import Slotted, two_edits
from grader.diagnosis.slips import FUNCTION_SLIPS, SLIPS, updated_name
from grader.diagnosis.syntax import LESSON_WORDS, Site, expr, in_words, int_value, layers_of, src

NODE_OPERATORS = {**OPERATORS, **SLIPS}


@dataclass(frozen=True)
class Variant:
    """A generated mistake: the reference with one edit. Duck-types ``catalogue.Mistake`` for ``Diagnoser``."""

    id: str
    assignment: str
    exercise: str  # the top-level function or class the edit sits in
    title: str
    explanation: str
    operator: str
    definition: str  # the edited top-level definition's source
    effect: str = ""  # what the edit does, quoting no code (``syntax.Edit.effect``)


# ------------------------------------------------------------------ statements: stage order



def stage_order(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str, str]]:
    """A step of a pipeline moved or doubled: ``scores = f(scores, ...)`` applied twice, or after the softmax
    (``weights = softmax(scores)`` followed by ``weights = f(weights, ...)``). Yields (edited definition,
    operator, title, fix, effect)."""
    body = definition.body
    for i, stmt in enumerate(body):
        target = _stage_target(stmt)
        if target is None:
            continue
        doubled = copy.deepcopy(definition)
        doubled.body.insert(i + 1, copy.deepcopy(stmt))
        yield (doubled, "twice", f"`{src(stmt).splitlines()[-1].strip()}` applied twice", "Apply each step once.",
               f"one step applied twice to {LESSON_WORDS[target]}" if target in LESSON_WORDS else "one step applied twice")
        for j in range(i + 1, len(body)):
            later = body[j]
            if isinstance(later, ast.Assign) and len(later.targets) == 1 and isinstance(later.targets[0], ast.Name) \
                    and isinstance(later.value, ast.Call) and target in {n.id for n in ast.walk(later.value) if isinstance(n, ast.Name)} \
                    and later.targets[0].id != target:
                out = later.targets[0].id
                moved = copy.deepcopy(definition)
                step = _renamed(copy.deepcopy(stmt), target, out)
                del moved.body[i]
                moved.body.insert(j, step)
                yield (moved, "order", f"`{src(stmt).splitlines()[-1].strip()}` applied after `{out} = ...` instead of before",
                       f"Keep the lesson's order: this step comes before `{src(later).strip()}`.",
                       "a step applied after the next one instead of before it")
                break


def pair_swaps(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str, str]]:
    """Two parameters of a kind swapped everywhere in a function: ``w_q`` and ``w_k``, ``q`` and ``k``."""
    params = _params(definition)
    for i, a in enumerate(params):
        for b in params[i + 1:]:
            if a[:2] == b[:2] and len(a) == len(b) or (len(a) == len(b) == 1 and a in "qkv" and b in "qkv"):
                swapped = copy.deepcopy(definition)
                for n in ast.walk(swapped):
                    if isinstance(n, ast.Name) and n.id in (a, b) and n is not None:
                        n.id = b if n.id == a else a
                swapped.args = copy.deepcopy(definition.args)
                yield (swapped, "pair", f"`{a}` and `{b}` swapped", f"Use each where the lesson does: `{a}` for {a}, `{b}` for {b}.",
                       f"{in_words(a, 'two inputs of a kind')} and {in_words(b, 'swapped')} swapped"
                       if a in LESSON_WORDS and b in LESSON_WORDS else "two inputs of a kind swapped")


def parameter_ignored(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str, str]]:
    """An int parameter ignored for a hard-coded value everywhere in the function: ``softmax`` taking its max and
    sum over dim 1 whatever ``dim`` says."""
    defaults = definition.args.defaults
    params = definition.args.args[len(definition.args.args) - len(defaults):]
    for param, default in zip(params, defaults):
        if int_value(default) is None:
            continue
        for value in DIMS:
            if value == int_value(default):
                continue
            fixed = copy.deepcopy(definition)
            for n in ast.walk(fixed):
                for field, child in ast.iter_fields(n):
                    if isinstance(child, ast.Name) and child.id == param.arg and isinstance(child.ctx, ast.Load):
                        setattr(n, field, expr(str(value)))
                    elif isinstance(child, list):
                        child[:] = [expr(str(value)) if isinstance(c, ast.Name) and c.id == param.arg
                                    and isinstance(c.ctx, ast.Load) else c for c in child]
            yield (fixed, "ignored", f"`{param.arg}` ignored: {value} used wherever it belongs",
                   f"Use the `{param.arg}` argument everywhere it is asked for, never a fixed {value}.",
                   f"an argument ignored: {value} used wherever it belongs")


def _stage_target(stmt: ast.stmt) -> str | None:
    """The name a pipeline step updates from itself (``x = f(x, ...)``, ``x = x.masked_fill(...)``, ``x =
    self.dropout(x)``), alone or as the whole body of an ``if`` (``slips.updated_name``)."""
    return updated_name(stmt)


def _renamed(node: ast.AST, old: str, new: str) -> ast.AST:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == old:
            n.id = new
    return node


# ------------------------------------------------------------------ generating the family


def _slots(root: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None, str, int | None]]:
    """Every node under ``root`` with where it hangs: (node, parent, field, index in the field's list or None)."""
    yield root, None, "", None
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                yield value, parent, field, None
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        yield item, parent, field, i


def _unparsed_with(root: ast.AST, parent: ast.AST, field: str, index: int | None, new: ast.AST) -> str:
    """``root``'s source with one node replaced by ``new``: swapped in place, unparsed, put back (no copy)."""
    old = getattr(parent, field) if index is None else getattr(parent, field)[index]
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new
    try:
        return src(root)
    finally:
        if index is None:
            setattr(parent, field, old)
        else:
            getattr(parent, field)[index] = old


def _params(definition: ast.AST) -> tuple[str, ...]:
    args = definition.args if isinstance(definition, ast.FunctionDef) else None
    return tuple(a.arg for a in args.args + args.kwonlyargs) if args else ()


def variants(source: str, assignment: str) -> list[Variant]:
    """Every generated variant of ``source`` (a reference), one edit each, without duplicates; an edit whose
    code is unchanged or does not compile is left out."""
    tree = ast.parse(source)
    found: dict[str, Variant] = {}
    for definition in tree.body:
        if not isinstance(definition, (ast.FunctionDef, ast.ClassDef)) or definition.name.startswith("_"):
            continue
        original = src(definition)
        edited: list[tuple[str, str, str, str, str]] = []  # (source, operator, title, fix, effect)
        slotted: list[Slotted] = []  # the node edits with their sites, for the two-edit search
        functions = [definition] if isinstance(definition, ast.FunctionDef) else [
            f for f in definition.body if isinstance(f, ast.FunctionDef)]
        owners = {id(n): f for f in functions for n in ast.walk(f)}
        assigned = {id(f): tuple(dict.fromkeys(n.id for n in ast.walk(f) if isinstance(n, ast.Name)
                                               and isinstance(n.ctx, ast.Store))) for f in functions}
        layers = layers_of(definition)
        for node, parent, field, index in list(_slots(definition)):
            if parent is None or isinstance(node, (ast.arguments, ast.arg, ast.expr_context)) or _in_docstring(node, parent):
                continue
            owner = owners.get(id(node), definition)
            site = Site(definition.name, _params(owner), parent, assigned.get(id(owner), ()), layers)
            for op_name, operator in NODE_OPERATORS.items():
                for edit in operator(node, site):
                    edited.append((_unparsed_with(definition, parent, field, index, edit.node), op_name, edit.title, edit.fix,
                                   edit.effect))
                    slotted.append(Slotted(parent, field, index, node, edit, op_name))
        for function in functions:
            # A function-level operator yields (definition, operator, title, fix[, effect]): no effect, the card
            # falls back to a sentence that quotes nothing of the student's (``truth``).
            for new_function, op_name, title, fix, *effect in [*stage_order(function), *pair_swaps(function),
                                                               *parameter_ignored(function),
                                                               *(e for slip in FUNCTION_SLIPS for e in slip(function))]:
                whole = new_function if function is definition else _swap_method(definition, function, new_function)
                edited.append((src(whole), op_name, title, fix, effect[0] if effect else ""))
        edited.extend((*pair, "") if len(pair) == 4 else pair for pair in two_edits(definition, slotted))
        for text, op_name, title, fix, effect in edited:
            if text == original:
                continue
            try:
                compile(text, "<variant>", "exec")
            except (SyntaxError, ValueError):
                continue
            key = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
            if key not in found:
                found[key] = Variant(f"{op_name}-{definition.name}-{key}", assignment, definition.name,
                                     f"`{definition.name}` with {title}", f"Fix: {fix}", op_name, text, effect)
    return list(found.values())


def _in_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _swap_method(cls: ast.ClassDef, old: ast.FunctionDef, new: ast.FunctionDef) -> ast.ClassDef:
    copied = copy.deepcopy(cls)
    copied.body = [new if isinstance(f, ast.FunctionDef) and f.name == old.name else f for f in copied.body]
    return copied


# ------------------------------------------------------------------ building a variant's module


class VariantFactory:
    """Builds variant modules from one run of the reference: a variant re-executes each top-level definition
    in a fresh namespace (its own in edited form), so every function calls the variant's versions."""

    def __init__(self, source: str, name: str) -> None:
        tree = ast.parse(source)
        self._name = name
        self._base: dict[str, Any] = {"__name__": name, "__builtins__": __builtins__}
        definitions = {d.name for d in tree.body if isinstance(d, (ast.FunctionDef, ast.ClassDef))}
        prelude = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        exec(compile(ast.Module(prelude, []), f"<{name}>", "exec"), self._base)  # noqa: S102 - our own reference
        self._definitions = [(d.name, compile(ast.Module([d], []), f"<{name}>", "exec"))
                             for d in tree.body if isinstance(d, (ast.FunctionDef, ast.ClassDef))]
        self._names = definitions

    def build(self, variant: Variant) -> ModuleType:
        module = ModuleType(f"{self._name}_{variant.id}")
        namespace = module.__dict__
        namespace.update({k: v for k, v in self._base.items() if k not in ("__name__",)})
        namespace["__name__"] = module.__name__
        for name, code in self._definitions:
            if name == variant.exercise:
                code = compile(variant.definition, f"<{module.__name__}>", "exec")
            exec(code, namespace)  # noqa: S102 - the reference, or our edit of it
        return module
