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
