"""The syntax-tree vocabulary the mutation operators share: an edit, where it sits, small helpers."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Edit:
    """One proposed change at one site: the node that replaces it, and what to tell a student."""

    node: ast.AST
    title: str  # short, in the lesson's words: what the code does instead
    fix: str  # the one-line fix
    # What the change does, quoting no code: said instead of ``title`` when the student's code does not contain
    # what the title quotes (``grader.diagnosis.truth``). '' falls back to a generic sentence.
    effect: str = ""


# The lesson's words for what a swapped function or reduction computes: an edit's ``effect`` quotes no code.
FUNCTION_WORDS = {"log2": "a base-2 logarithm (bits) where the lesson takes the natural log",
                  "log10": "a base-10 logarithm where the lesson takes the natural log",
                  "exp2": "powers of 2 where the lesson takes powers of e", "isqrt": "a square root rounded down",
                  "tril": "the lower triangle kept where the lesson keeps the upper one",
                  "triu": "the upper triangle kept where the lesson keeps the lower one"}
REDUCTION_WORDS = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "prod": "product", "logsumexp": "log-sum-exp"}

# The lesson's words for the tensors its code names: an effect speaks of "the scores", never of `scores`.
LESSON_WORDS = {"scores": "the scores", "weights": "the weights", "out": "the output", "q": "the queries",
                "k": "the keys", "v": "the values", "x": "the input", "w_q": "the query weights", "w_k": "the key weights",
                "w_v": "the value weights", "w_o": "the output weights"}


def in_words(name: str, otherwise: str) -> str:
    """``name`` in the lesson's words, or ``otherwise`` where the lesson has none for it."""
    return LESSON_WORDS.get(name, otherwise)


Operator = Callable[[ast.AST, "Site"], Iterator[Edit]]


@dataclass(frozen=True)
class Site:
    """Where an operator looks: the enclosing top-level definition, its parameters, the node's parent."""

    definition: str
    params: tuple[str, ...]
    parent: ast.AST | None
    locals: tuple[str, ...] = ()  # names the enclosing function assigns
    layers: tuple[tuple[str, str], ...] = ()  # a class's ``self.NAME = nn.KIND(...)`` submodules: (NAME, KIND)


LAYER_WORDS = {"Dropout": "the dropout", "Linear": "the linear projection", "LayerNorm": "the layer norm",
               "ModuleList": "the list of heads", "Embedding": "the embedding", "Softmax": "the softmax"}


def layers_of(definition: ast.AST) -> tuple[tuple[str, str], ...]:
    """``(name, kind)`` for each ``self.name = nn.Kind(...)`` (or ``torch.nn.Kind``, a bare ``Kind``) in a class:
    what its submodules are, so an effect can say "the dropout" without quoting the student's attribute names."""
    found = []
    for n in ast.walk(definition):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) \
                and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self" \
                and isinstance(n.value, ast.Call):
            func = n.value.func
            kind = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if kind[:1].isupper():
                found.append((n.targets[0].attr, kind))
    return tuple(found)


def layer_words(site: "Site", call: ast.AST, otherwise: str) -> str:
    """``self.name(...)``'s layer in the lesson's words ("the dropout"), from its kind; ``otherwise`` if unknown."""
    name = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else ""
    kind = dict(site.layers).get(name, "")
    return LAYER_WORDS.get(kind, f"the {kind} layer" if kind else otherwise)


def src(node: ast.AST) -> str:
    """The node as source: how titles quote code."""
    return ast.unparse(node)


def expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def int_value(node: ast.AST) -> int | None:
    """An int literal's value (``-1`` is a UnaryOp in the tree)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def called(node: ast.AST) -> str | None:
    """The called name of ``x.name(...)``, ``torch.name(...)`` or a plain ``name(...)`` (the assignment's own
    ``softmax(scores, dim=-1)``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def method(node: ast.AST) -> str | None:
    """The called name of ``x.name(...)`` or ``torch.name(...)`` only: what an edit of ``.name`` can change."""
    return node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None


def with_fields(node: ast.Call, **changes: Any) -> ast.Call:
    new = copy.deepcopy(node)
    for key, value in changes.items():
        setattr(new, key, value)
    return new


def keyword_of(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def on_self(call: ast.Call) -> bool:
    """``self.proj(...)``: a submodule called, not a method of a tensor."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
