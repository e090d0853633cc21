"""Mutation operators: the known mistakes of every exercise, generated from the reference.

The hand-written catalogue (``catalogue/``) names one way to write each mistake. A
student writes the same mistake many ways (``dim=1`` or ``dim=0``, ``e.sum(0)`` or
``e.sum(dim=0)``), so diagnosis also replays *variants* of the reference that these
operators generate: each operator is one function that looks at one node of the
reference's syntax tree and proposes edits, each with a title and a sentence in the
lesson's words and the one-line fix. ``variants(source)`` applies every operator at
every site of every top-level function and class, one edit per variant.

An operator finds its sites by the shape of the code, never by an exercise's name, so a
new exercise gets its variants without operator work; a mistake no operator produces
goes in the catalogue. Adding an operator is adding one function to ``OPERATORS``.

A variant's module is built cheaply (``VariantFactory``): the reference runs once, and a
variant re-executes only the top-level definitions, the edited one in its edited form,
in a fresh namespace, so ``attention`` calls the edited ``softmax``.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

DIMS = (-3, -2, -1, 0, 1, 2)
REDUCTIONS = ("sum", "mean", "amax", "amin", "prod", "logsumexp")
DIM_METHODS = frozenset({"sum", "mean", "amax", "amin", "softmax", "log_softmax", "cumsum", "cumprod", "unsqueeze",
                         "squeeze", "argmax", "flip", "norm", "std", "var", "logsumexp", "prod", "cat", "stack"})
TWO_DIM_METHODS = frozenset({"transpose", "swapaxes", "movedim"})
IN_PLACE = frozenset({"masked_fill", "add", "sub", "mul", "div", "exp", "clamp", "clamp_min", "tril", "triu",
                      "fill", "copy", "log", "neg"})
FILLS = (("float('inf')", "+inf"), ("-1e9", "-1e9"), ("-30.0", "-30"), ("0.0", "0"), ("-1e4", "-1e4"),
         ("torch.finfo(torch.float32).min", "the smallest float32"))
CASTS = (("float", "a float32 result"), ("half", "a float16 result"), ("double", "a float64 result"))
FUNC_SWAPS = {"log": ("log2", "log10"), "exp": ("exp2",), "sqrt": ("isqrt",), "tril": ("triu",), "triu": ("tril",)}


@dataclass(frozen=True)
class Edit:
    """One proposed change at one site: the node that replaces it, and what to tell a student."""

    node: ast.AST
    title: str  # short, in the lesson's words: what the code does instead
    fix: str  # the one-line fix


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

    def variant(self, factory: VariantFactory) -> ModuleType:
        return factory.build(self)


Operator = Callable[[ast.AST, "Site"], Iterator[Edit]]


@dataclass(frozen=True)
class Site:
    """Where an operator looks: the enclosing top-level definition, its parameters, the node's parent."""

    definition: str
    params: tuple[str, ...]
    parent: ast.AST | None
    locals: tuple[str, ...] = ()  # names the enclosing function assigns


# ------------------------------------------------------------------ helpers


def _src(node: ast.AST) -> str:
    return ast.unparse(node)


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _int_value(node: ast.AST) -> int | None:
    """An int literal's value (``-1`` is a UnaryOp in the tree)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _method(node: ast.AST) -> str | None:
    """The called name of ``x.name(...)``, ``torch.name(...)`` or a plain ``name(...)`` (the assignment's own
    ``softmax(scores, dim=-1)``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _attr_method(node: ast.AST) -> str | None:
    """The called name of ``x.name(...)`` or ``torch.name(...)`` only: what an edit of ``.name`` can change."""
    return node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None


def _with(node: ast.Call, **changes: Any) -> ast.Call:
    new = copy.deepcopy(node)
    for key, value in changes.items():
        setattr(new, key, value)
    return new


def _kw(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


# ------------------------------------------------------------------ the operators


def dim_argument(node: ast.AST, site: Site) -> Iterator[Edit]:
    """Every dim / axis argument to each other value: ``sum(dim=-1)`` -> ``sum(dim=0)``, a parameter
    ``dim`` ignored for a hard-coded one, the dim left out (a reduction over everything)."""
    name = _method(node)
    if name not in DIM_METHODS and name not in TWO_DIM_METHODS:
        return
    assert isinstance(node, ast.Call)
    spots: list[tuple[str, int | None, ast.AST]] = []  # (keyword or "", positional index, current node)
    for k in node.keywords:
        if k.arg in ("dim", "axis"):
            spots.append((k.arg, None, k.value))
    first = 1 if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == "torch" and name in ("softmax", "log_softmax", "cumsum", "sum", "mean", "amax") else 0
    for i, arg in enumerate(node.args[first:first + (2 if name in TWO_DIM_METHODS else 1)], start=first):
        if _int_value(arg) is not None or isinstance(arg, ast.Name):
            spots.append(("", i, arg))
    for key, index, current in spots:
        old = _int_value(current)
        lesson = f"the `{current.id}` argument" if isinstance(current, ast.Name) else f"dim {_src(current)}"
        for value in DIMS:
            if value == old:
                continue
            new = copy.deepcopy(node)
            if index is None:
                _kw(new, key).value = _expr(str(value))  # type: ignore[union-attr]
            else:
                new.args[index] = _expr(str(value))
            yield Edit(new, f"`{_src(node)}` taken over dim {value} instead of {lesson}",
                       f"Take it over {lesson}, as in `{_src(node)}`.")
        if name in ("sum", "mean", "amax", "amin") and index is None:
            new = copy.deepcopy(node)
            new.keywords = [k for k in new.keywords if k.arg not in ("dim", "axis", "keepdim")]
            yield Edit(new, f"`{_src(node)}` reduced over every element instead of over {lesson}",
                       f"Reduce over {lesson} only, as in `{_src(node)}`.")


def keepdim(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``keepdim`` toggled on a reduction: without it the reduced axis is gone and broadcasting lines up the
    wrong axes."""
    if _attr_method(node) not in REDUCTIONS:
        return
    assert isinstance(node, ast.Call)
    found = _kw(node, "keepdim")
    if found is not None:
        new = _with(node, keywords=[k for k in node.keywords if k.arg != "keepdim"])
        yield Edit(new, f"`{_src(node)}` without keepdim=True, so the reduced axis disappears",
                   f"Keep the reduced axis for broadcasting: `{_src(node)}`.")
    elif node.args or _kw(node, "dim"):
        new = _with(node, keywords=[*copy.deepcopy(node.keywords), ast.keyword("keepdim", ast.Constant(True))])
        yield Edit(new, f"`{_src(node)}` with keepdim=True", f"Write `{_src(node)}`.")


def reduction(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A reduction swapped for another: the entropy averaged instead of summed, the mean subtracted
    instead of the max."""
    name = _attr_method(node)
    if name not in REDUCTIONS:
        return
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    for other in REDUCTIONS:
        if other != name and other != "logsumexp":
            new = copy.deepcopy(node)
            new.func.attr = other  # type: ignore[attr-defined]
            yield Edit(new, f"`.{other}(...)` where the lesson takes `.{name}(...)`", f"Use `{_src(node)}`.")
            if node.args or node.keywords:
                whole = _with(new, args=[], keywords=[])
                yield Edit(whole, f"`.{other}()` over every element (one number) where the lesson takes `{_src(node)}`",
                           f"Reduce over the asked axis only: `{_src(node)}`.")


def transpose_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A transpose left out: ``q @ k`` where the lesson writes ``q @ k.transpose(-2, -1)``."""
    if _attr_method(node) in TWO_DIM_METHODS or (isinstance(node, ast.Attribute) and node.attr in ("mT", "T")):
        inner = node.func.value if isinstance(node, ast.Call) else node.value  # type: ignore[attr-defined]
        yield Edit(copy.deepcopy(inner), f"`{_src(inner)}` used without its transpose", f"Transpose it: `{_src(node)}`.")


def transpose(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A transpose added to the other operand of a matmul, or the operands swapped."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        a, b = node.left, node.right
        yield Edit(ast.BinOp(copy.deepcopy(b), ast.MatMult(), copy.deepcopy(a)),
                   f"the matmul's operands swapped: `{_src(b)} @ {_src(a)}`", f"Multiply in this order: `{_src(node)}`.")
        for side, operand in (("left", a), ("right", b)):
            is_t = _attr_method(operand) in TWO_DIM_METHODS or (isinstance(operand, ast.Attribute) and operand.attr == "mT")
            if is_t:
                continue
            moved = ast.Call(ast.Attribute(copy.deepcopy(operand), "transpose", ast.Load()), [_expr("-2"), _expr("-1")], [])
            new = ast.BinOp(moved if side == "left" else copy.deepcopy(a), ast.MatMult(),
                            copy.deepcopy(b) if side == "left" else moved)
            yield Edit(new, f"`{_src(operand)}` transposed in `{_src(node)}`", f"Multiply `{_src(node)}`.")


def scale(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The scale: none, d instead of sqrt(d), multiplied instead of divided, the integer square root,
    ``d ** -1/2`` (a precedence slip: (d ** -1) / 2)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return
    right = node.right
    if not (isinstance(right, ast.Call) and isinstance(right.func, ast.Attribute) and right.func.attr == "sqrt"
            and len(right.args) == 1):
        return
    d, left = right.args[0], node.left
    fix = f"Divide by the square root: `{_src(node)}`."
    yield Edit(copy.deepcopy(left), f"`{_src(left)}` not scaled at all", fix)
    yield Edit(ast.BinOp(copy.deepcopy(left), ast.Div(), copy.deepcopy(d)), f"`{_src(left)}` divided by {_src(d)}, not its square root", fix)
    yield Edit(ast.BinOp(copy.deepcopy(left), ast.Mult(), copy.deepcopy(right)),
               f"`{_src(left)}` multiplied by √{_src(d)} instead of divided", fix)
    yield Edit(_expr(f"({_src(left)}) / math.isqrt({_src(d)})"), f"the integer square root `math.isqrt({_src(d)})`",
               f"math.isqrt rounds down; {fix}")
    yield Edit(_expr(f"({_src(left)}) * ({_src(d)}) ** -1 / 2"), f"`{_src(d)} ** -1/2`, which Python reads as ({_src(d)} ** -1) / 2",
               f"Write the power in parentheses, `** (-1 / 2)`, or {fix[0].lower()}{fix[1:]}")


def shape_index(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A size read from the wrong axis or the wrong tensor: ``q.shape[-1]`` -> ``q.shape[-2]`` (T), ``v.shape[-1]``."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"):
        return
    index = _int_value(node.slice)
    owner = node.value.value
    if index is None or not isinstance(owner, ast.Name):
        return
    for value in (-1, -2, 0):
        if value != index:
            new = copy.deepcopy(node)
            new.slice = _expr(str(value))
            yield Edit(new, f"`{_src(new)}` where the lesson uses `{_src(node)}`", f"Use `{_src(node)}`.")
    for other in site.params:
        if other != owner.id and len(other) <= 2:  # the tensors (q, k, v, x), not flags or sizes
            new = copy.deepcopy(node)
            new.value.value = ast.Name(other, ast.Load())  # type: ignore[attr-defined]
            yield Edit(new, f"`{_src(new)}` where the lesson uses `{_src(node)}`", f"Use `{_src(node)}`.")


def mask(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The mask: its diagonal moved, tril/triu swapped, inverted, filled with +inf or a finite number."""
    name = _attr_method(node)
    if name in ("tril", "triu"):
        assert isinstance(node, ast.Call)
        for diagonal in (-1, 1):
            new = _with(node, keywords=[*copy.deepcopy([k for k in node.keywords if k.arg != "diagonal"]),
                                        ast.keyword("diagonal", _expr(str(diagonal)))])
            yield Edit(new, f"`{_src(new)}`: the mask's diagonal moved by {diagonal}",
                       f"Position t may look at 0..t, itself included: `{_src(node)}`.")
    if name == "masked_fill":
        assert isinstance(node, ast.Call)
        if node.args:
            cond = node.args[0]
            flipped = cond.operand if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Invert) \
                else ast.UnaryOp(ast.Invert(), copy.deepcopy(cond))
            yield Edit(_with(node, args=[copy.deepcopy(flipped), *copy.deepcopy(node.args[1:])]),
                       "the mask inverted: the allowed positions filled instead of the future ones",
                       f"Fill where the mask is False: `{_src(node)}`.")
        if len(node.args) == 2:
            for text, words in FILLS:
                if _src(node.args[1]).replace('"', "'") != text:
                    yield Edit(_with(node, args=[copy.deepcopy(node.args[0]), _expr(text)]),
                               f"masked scores filled with {words} instead of -inf",
                               "Fill with float('-inf'): softmax turns it into a weight of exactly 0.")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and isinstance(site.parent, ast.Call) \
            and _attr_method(site.parent) != "masked_fill":
        yield Edit(copy.deepcopy(node.operand), f"`{_src(node.operand)}` where the lesson inverts it", f"Write `{_src(node)}`.")


def result_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``x.masked_fill(...)`` (or any out-of-place method) whose result is not used: ``x`` comes out unchanged."""
    name = _attr_method(node)
    if name is None or name in ("item", "shape") or not isinstance(node.func.value, ast.Name):  # type: ignore[attr-defined]
        return
    receiver = node.func.value  # type: ignore[attr-defined]
    if receiver.id in ("torch", "math", "self", "nn", "F"):
        return
    yield Edit(copy.deepcopy(receiver), f"the result of `{_src(node)}` dropped, so `{receiver.id}` is used unchanged",
               f"Methods like `{name}` return a new tensor: use it, `{receiver.id} = {_src(node)}`.")


def in_place(node: ast.AST, site: Site) -> Iterator[Edit]:
    """An out-of-place method made in-place (``masked_fill`` -> ``masked_fill_``): it writes into the input."""
    name = _attr_method(node)
    if name in IN_PLACE:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        new = copy.deepcopy(node)
        new.func.attr = f"{name}_"  # type: ignore[attr-defined]
        yield Edit(new, f"`{name}_` (in place), which writes into the caller's tensor",
                   f"Never write into an input: use `{name}` without the underscore.")


def in_place_arithmetic(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``scores / s`` done in place (``scores /= s``, ``scores.div_(s)``): the caller's tensor is overwritten."""
    methods = {ast.Div: "div_", ast.Mult: "mul_", ast.Add: "add_", ast.Sub: "sub_"}
    if isinstance(node, ast.BinOp) and type(node.op) in methods and isinstance(node.left, ast.Name) \
            and node.left.id in site.params:
        new = ast.Call(ast.Attribute(ast.Name(node.left.id, ast.Load()), methods[type(node.op)], ast.Load()),
                       [copy.deepcopy(node.right)], [])
        yield Edit(new, f"`{_src(node)}` done in place (`{node.left.id} {_src(ast.BinOp(ast.Name('x'), node.op, ast.Name('y')))[2:3]}= ...`), "
                        f"which overwrites the caller's `{node.left.id}`",
                   f"Compute a new tensor: `{_src(node)}`, never an augmented assignment on an input.")


def returned_other(node: ast.AST, site: Site) -> Iterator[Edit]:
    """Another local returned in place of one: ``return out, scores`` where the lesson returns the weights."""
    if not isinstance(site.parent, ast.Return) or not isinstance(node, ast.Tuple):
        return
    for i, element in enumerate(node.elts):
        if not isinstance(element, ast.Name):
            continue
        for other in site.locals:
            if other != element.id:
                new = copy.deepcopy(node)
                new.elts[i] = ast.Name(other, ast.Load())
                yield Edit(new, f"`{other}` returned where the lesson returns `{element.id}`",
                           f"Return `{element.id}`: `return {_src(node)}`.")


def operand_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """One side of ``a - b`` or ``a @ w`` left out: the max not subtracted, a projection skipped."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.MatMult)) and isinstance(node.right, ast.Name):
        what = "not subtracted" if isinstance(node.op, ast.Sub) else "not applied"
        yield Edit(copy.deepcopy(node.left), f"`{node.right.id}` {what} in `{_src(node)}`", f"Write `{_src(node)}`.")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        yield Edit(copy.deepcopy(node.operand), f"the minus sign of `{_src(node)}` left out", f"Write `{_src(node)}`.")


def applied_twice(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A projection applied twice: ``a @ w`` -> ``a @ w @ w``, ``self.proj(x)`` -> ``self.proj(self.proj(x))``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.right, ast.Name):
        yield Edit(ast.BinOp(copy.deepcopy(node), ast.MatMult(), copy.deepcopy(node.right)),
                   f"`{node.right.id}` applied twice", f"Apply it once: `{_src(node)}`.")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "self" and len(node.args) == 1 and not node.keywords:
        yield Edit(ast.Call(copy.deepcopy(node.func), [copy.deepcopy(node)], []),
                   f"`self.{node.func.attr}` applied twice", f"Apply it once: `{_src(node)}`.")


def wrong_stage(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A projection applied at the wrong stage: ``merge_heads(out) @ w_o`` -> ``merge_heads(out @ w_o)`` (before
    the merge), ``self.dropout(self.proj(out))`` -> ``self.proj(self.dropout(out))``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.Call) \
            and len(node.left.args) == 1 and isinstance(node.right, ast.Name):
        inner = node.left
        moved = _with(inner, args=[ast.BinOp(copy.deepcopy(inner.args[0]), ast.MatMult(), copy.deepcopy(node.right))])
        yield Edit(moved, f"`{node.right.id}` applied inside `{_src(inner.func)}(...)` instead of after it",
                   f"Apply it to the result: `{_src(node)}`.")
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Call) \
            and len(node.args[0].args) == 1 and not node.keywords and _on_self(node) and _on_self(node.args[0]):
        inner = node.args[0]
        swapped = ast.Call(copy.deepcopy(inner.func), [ast.Call(copy.deepcopy(node.func), [copy.deepcopy(inner.args[0])], [])],
                           copy.deepcopy(inner.keywords))
        yield Edit(swapped, f"`{_src(inner.func)}` and `{_src(node.func)}` applied in the other order",
                   f"Apply them as `{_src(node)}`.")


def _on_self(call: ast.Call) -> bool:
    """``self.proj(...)``: a submodule called, not a method of a tensor."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"


def flag_inverted(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A flag read the other way round: ``if causal:`` -> ``if not causal:``."""
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in site.params:
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(ast.Not(), ast.Name(node.test.id, ast.Load()))
        yield Edit(new, f"`{node.test.id}` read the other way round (`if not {node.test.id}:`)",
                   f"Do this step when `{node.test.id}` is True: `if {node.test.id}:`.")


def order_reversed(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The heads (or any loop's items) taken in reverse order: ``for h in self.heads`` -> ``reversed(self.heads)``."""
    if isinstance(node, ast.comprehension) and not isinstance(node.iter, ast.Call):
        new = copy.deepcopy(node)
        new.iter = ast.Call(ast.Name("reversed", ast.Load()), [copy.deepcopy(node.iter)], [])
        yield Edit(new, f"`{_src(node.iter)}` taken in reverse order", f"Keep their order: `for ... in {_src(node.iter)}`.")


def names_swapped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A parameter used where another belongs: keys computed with the query projection (``w_k`` -> ``w_q``)."""
    if not (isinstance(node, ast.Name) and node.id in site.params and isinstance(node.ctx, ast.Load)):
        return
    kin = [p for p in site.params if p != node.id and p[:2] == node.id[:2] and len(p) == len(node.id)]
    for other in kin:
        yield Edit(ast.Name(other, ast.Load()), f"`{other}` used where `{node.id}` belongs",
                   f"Use `{node.id}` there.")


def cast(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The returned tensor cast (float32, float16) or taken out of autograd (``detach``, a NumPy round trip)."""
    if not isinstance(site.parent, ast.Return) or isinstance(node, ast.Tuple) or node is not site.parent.value:
        return
    for method, words in CASTS:
        yield Edit(_expr(f"({_src(node)}).{method}()"), f"{words} whatever the inputs' dtype",
                   "Keep the inputs' dtype: no .float() / .half() on the result.")
    yield Edit(_expr(f"({_src(node)}).detach()"), "the result detached from autograd",
               "Leave it attached: no .detach() (or torch.no_grad()) on the way.")
    yield Edit(_expr(f"torch.from_numpy(({_src(node)}).detach().cpu().numpy())"),
               "the result taken through NumPy, which leaves autograd and the device",
               "Stay in torch from input to output.")


def function_swapped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A function for its neighbour: ``log`` -> ``log2`` (entropy in bits), ``tril`` -> ``triu``, ``view`` for
    ``reshape`` (which fails on a transposed tensor), ``nn.ModuleList`` -> a plain list."""
    name = _attr_method(node)
    if name in FUNC_SWAPS:
        for other in FUNC_SWAPS[name]:
            new = copy.deepcopy(node)
            new.func.attr = other  # type: ignore[attr-defined]
            yield Edit(new, f"`{other}` where the lesson uses `{name}`", f"Use `{name}`: `{_src(node)}`.")
    if name in ("reshape", "view"):
        new = copy.deepcopy(node)
        new.func.attr = "view" if name == "reshape" else "reshape"  # type: ignore[attr-defined]
        yield Edit(new, f"`.{new.func.attr}` where the lesson uses `.{name}`", f"Write `{_src(node)}`.")  # type: ignore[attr-defined]
        args = node.args  # type: ignore[attr-defined]
        for i in range(len(args) - 1):
            swapped = copy.deepcopy(node)
            swapped.args[i], swapped.args[i + 1] = swapped.args[i + 1], swapped.args[i]  # type: ignore[attr-defined]
            yield Edit(swapped, f"`{_src(swapped)}`: sizes in another order, so channels go to the wrong head",
                       f"Write `{_src(node)}`.")
    if name == "ModuleList" and isinstance(node, ast.Call) and node.args:
        inner = node.args[0]
        listed = ast.ListComp(inner.elt, inner.generators) if isinstance(inner, ast.GeneratorExp) else ast.Call(
            ast.Name("list", ast.Load()), [inner], [])
        yield Edit(copy.deepcopy(listed), "the heads kept in a plain Python list, which nn.Module does not register",
                   "Wrap them in nn.ModuleList so .parameters(), .to() and state_dict see them.")


def einsum_axes(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``torch.einsum`` with the output's axes permuted."""
    if _attr_method(node) != "einsum" or not node.args or not isinstance(node.args[0], ast.Constant):  # type: ignore[attr-defined]
        return
    spec = str(node.args[0].value)  # type: ignore[attr-defined]
    if "->" not in spec:
        return
    inputs, output = spec.split("->")
    if len(output) >= 2:
        new = copy.deepcopy(node)
        new.args[0] = ast.Constant(f"{inputs}->{output[:-2]}{output[-1]}{output[-2]}")  # type: ignore[attr-defined]
        yield Edit(new, f"einsum '{new.args[0].value}' with the last two output axes swapped", f"Write '{spec}'.")  # type: ignore[attr-defined]


OPERATORS: dict[str, Operator] = {
    "dim": dim_argument, "keepdim": keepdim, "reduction": reduction, "untransposed": transpose_dropped, "transpose": transpose, "scale": scale,
    "shape": shape_index, "mask": mask, "dropped": result_dropped, "inplace": in_place, "inplace_arith": in_place_arithmetic,
    "returned": returned_other, "operand": operand_dropped,
    "twice": applied_twice, "stage": wrong_stage, "reversed": order_reversed, "flag": flag_inverted, "swap": names_swapped, "cast": cast, "function": function_swapped, "einsum": einsum_axes,
}


# ------------------------------------------------------------------ statements: stage order


def stage_order(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str]]:
    """A step of a pipeline moved or doubled: ``scores = f(scores, ...)`` applied twice, or after the softmax
    (``weights = softmax(scores)`` followed by ``weights = f(weights, ...)``). Yields (edited definition,
    operator, title, fix)."""
    body = definition.body
    for i, stmt in enumerate(body):
        target = _stage_target(stmt)
        if target is None:
            continue
        doubled = copy.deepcopy(definition)
        doubled.body.insert(i + 1, copy.deepcopy(stmt))
        yield doubled, "twice", f"`{_src(stmt).splitlines()[-1].strip()}` applied twice", "Apply each step once."
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
                yield (moved, "order", f"`{_src(stmt).splitlines()[-1].strip()}` applied after `{out} = ...` instead of before",
                       f"Keep the lesson's order: this step comes before `{_src(later).strip()}`.")
                break


def pair_swaps(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str]]:
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
                yield swapped, "pair", f"`{a}` and `{b}` swapped", f"Use each where the lesson does: `{a}` for {a}, `{b}` for {b}."


def parameter_ignored(definition: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, str, str, str]]:
    """An int parameter ignored for a hard-coded value everywhere in the function: ``softmax`` taking its max and
    sum over dim 1 whatever ``dim`` says."""
    defaults = definition.args.defaults
    params = definition.args.args[len(definition.args.args) - len(defaults):]
    for param, default in zip(params, defaults):
        if _int_value(default) is None:
            continue
        for value in DIMS:
            if value == _int_value(default):
                continue
            fixed = copy.deepcopy(definition)
            for n in ast.walk(fixed):
                for field, child in ast.iter_fields(n):
                    if isinstance(child, ast.Name) and child.id == param.arg and isinstance(child.ctx, ast.Load):
                        setattr(n, field, _expr(str(value)))
                    elif isinstance(child, list):
                        child[:] = [_expr(str(value)) if isinstance(c, ast.Name) and c.id == param.arg
                                    and isinstance(c.ctx, ast.Load) else c for c in child]
            yield (fixed, "ignored", f"`{param.arg}` ignored: {value} used wherever it belongs",
                   f"Use the `{param.arg}` argument everywhere it is asked for, never a fixed {value}.")


def _stage_target(stmt: ast.stmt) -> str | None:
    """``x = f(x, ...)``, alone or as the whole body of an ``if``: the name it updates."""
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse:
        stmt = stmt.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.Call):
        name = stmt.targets[0].id
        if any(isinstance(a, ast.Name) and a.id == name for a in stmt.value.args):
            return name
    return None


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
        return _src(root)
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
        original = _src(definition)
        edited: list[tuple[str, str, str, str]] = []  # (source, operator, title, fix)
        functions = [definition] if isinstance(definition, ast.FunctionDef) else [
            f for f in definition.body if isinstance(f, ast.FunctionDef)]
        owners = {id(n): f for f in functions for n in ast.walk(f)}
        assigned = {id(f): tuple(dict.fromkeys(n.id for n in ast.walk(f) if isinstance(n, ast.Name)
                                               and isinstance(n.ctx, ast.Store))) for f in functions}
        for node, parent, field, index in list(_slots(definition)):
            if parent is None or isinstance(node, (ast.arguments, ast.arg, ast.expr_context)) or _in_docstring(node, parent):
                continue
            owner = owners.get(id(node), definition)
            site = Site(definition.name, _params(owner), parent, assigned.get(id(owner), ()))
            for op_name, operator in OPERATORS.items():
                for edit in operator(node, site):
                    edited.append((_unparsed_with(definition, parent, field, index, edit.node), op_name, edit.title, edit.fix))
        for function in functions:
            for new_function, op_name, title, fix in [*stage_order(function), *pair_swaps(function),
                                                      *parameter_ignored(function)]:
                whole = new_function if function is definition else _swap_method(definition, function, new_function)
                edited.append((_src(whole), op_name, title, fix))
        for text, op_name, title, fix in edited:
            if text == original:
                continue
            try:
                compile(text, "<variant>", "exec")
            except (SyntaxError, ValueError):
                continue
            key = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
            if key not in found:
                found[key] = Variant(f"{op_name}-{definition.name}-{key}", assignment, definition.name,
                                     f"`{definition.name}` with {title}", f"Fix: {fix}", op_name, text)
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
