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

This module holds the operators that look at one node; ``family`` applies them (and the
operators that look at a whole function) to a reference and builds the variants' modules.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from grader.diagnosis.syntax import (FUNCTION_WORDS, REDUCTION_WORDS, Edit, Operator, Site, called, expr, in_words,
                                     int_value, keyword_of, layer_words, method, on_self, src, with_fields)

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


# ------------------------------------------------------------------ the operators


def dim_argument(node: ast.AST, site: Site) -> Iterator[Edit]:
    """Every dim / axis argument to each other value: ``sum(dim=-1)`` -> ``sum(dim=0)``, a parameter
    ``dim`` ignored for a hard-coded one, the dim left out (a reduction over everything)."""
    name = called(node)
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
        if int_value(arg) is not None or isinstance(arg, ast.Name):
            spots.append(("", i, arg))
    for key, index, current in spots:
        old = int_value(current)
        lesson = f"the `{current.id}` argument" if isinstance(current, ast.Name) else f"dim {src(current)}"
        for value in DIMS:
            if value == old:
                continue
            new = copy.deepcopy(node)
            if index is None:
                keyword_of(new, key).value = expr(str(value))  # type: ignore[union-attr]
            else:
                new.args[index] = expr(str(value))
            yield Edit(new, f"`{src(node)}` taken over dim {value} instead of {lesson}",
                       f"Take it over {lesson}, as in `{src(node)}`.", f"a reduction or softmax taken over dim {value} instead of the asked axis")
        if name in ("sum", "mean", "amax", "amin") and index is None:
            new = copy.deepcopy(node)
            new.keywords = [k for k in new.keywords if k.arg not in ("dim", "axis", "keepdim")]
            yield Edit(new, f"`{src(node)}` reduced over every element instead of over {lesson}",
                       f"Reduce over {lesson} only, as in `{src(node)}`.", "a reduction over every element instead of over one axis")


def keepdim(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``keepdim`` toggled on a reduction: without it the reduced axis is gone and broadcasting lines up the
    wrong axes."""
    if method(node) not in REDUCTIONS:
        return
    assert isinstance(node, ast.Call)
    found = keyword_of(node, "keepdim")
    if found is not None:
        new = with_fields(node, keywords=[k for k in node.keywords if k.arg != "keepdim"])
        yield Edit(new, f"`{src(node)}` without keepdim=True, so the reduced axis disappears",
                   f"Keep the reduced axis for broadcasting: `{src(node)}`.", "a reduced axis dropped, so broadcasting lines up the wrong axes")
    elif node.args or keyword_of(node, "dim"):
        new = with_fields(node, keywords=[*copy.deepcopy(node.keywords), ast.keyword("keepdim", ast.Constant(True))])
        yield Edit(new, f"`{src(node)}` with keepdim=True", f"Write `{src(node)}`.", "a reduced axis kept where the lesson drops it")


def reduction(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A reduction swapped for another: the entropy averaged instead of summed, the mean subtracted
    instead of the max."""
    name = method(node)
    if name not in REDUCTIONS:
        return
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    for other in REDUCTIONS:
        if other != name and other != "logsumexp":
            new = copy.deepcopy(node)
            new.func.attr = other  # type: ignore[attr-defined]
            yield Edit(new, f"`.{other}(...)` where the lesson takes `.{name}(...)`", f"Use `{src(node)}`.",
                       f"a {REDUCTION_WORDS[other]} where the lesson takes a {REDUCTION_WORDS[name]}")
            if node.args or node.keywords:
                whole = with_fields(new, args=[], keywords=[])
                yield Edit(whole, f"`.{other}()` over every element (one number) where the lesson takes `{src(node)}`",
                           f"Reduce over the asked axis only: `{src(node)}`.",
                           f"a {REDUCTION_WORDS[other]} over every element (one number) where the lesson takes a "
                           f"{REDUCTION_WORDS[name]} over one axis")


def transpose_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A transpose left out: ``q @ k`` where the lesson writes ``q @ k.transpose(-2, -1)``."""
    if method(node) in TWO_DIM_METHODS or (isinstance(node, ast.Attribute) and node.attr in ("mT", "T")):
        inner = node.func.value if isinstance(node, ast.Call) else node.value  # type: ignore[attr-defined]
        yield Edit(copy.deepcopy(inner), f"`{src(inner)}` used without its transpose", f"Transpose it: `{src(node)}`.", "an operand used without its transpose")


def transpose(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A transpose added to the other operand of a matmul, or the operands swapped."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        a, b = node.left, node.right
        yield Edit(ast.BinOp(copy.deepcopy(b), ast.MatMult(), copy.deepcopy(a)),
                   f"the matmul's operands swapped: `{src(b)} @ {src(a)}`", f"Multiply in this order: `{src(node)}`.", "the matrix product's operands swapped")
        for side, operand in (("left", a), ("right", b)):
            is_t = method(operand) in TWO_DIM_METHODS or (isinstance(operand, ast.Attribute) and operand.attr == "mT")
            if is_t:
                continue
            moved = ast.Call(ast.Attribute(copy.deepcopy(operand), "transpose", ast.Load()), [expr("-2"), expr("-1")], [])
            new = ast.BinOp(moved if side == "left" else copy.deepcopy(a), ast.MatMult(),
                            copy.deepcopy(b) if side == "left" else moved)
            yield Edit(new, f"`{src(operand)}` transposed in `{src(node)}`", f"Multiply `{src(node)}`.", f"the {side} operand of a matrix product transposed")


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
    fix = f"Divide by the square root: `{src(node)}`."
    yield Edit(copy.deepcopy(left), f"`{src(left)}` not scaled at all", fix, "the scores not scaled at all")
    yield Edit(ast.BinOp(copy.deepcopy(left), ast.Div(), copy.deepcopy(d)), f"`{src(left)}` divided by {src(d)}, not its square root", fix,
               "the scores divided by d, not √d")
    yield Edit(ast.BinOp(copy.deepcopy(left), ast.Mult(), copy.deepcopy(right)),
               f"`{src(left)}` multiplied by √{src(d)} instead of divided", fix, "the scores multiplied by √d instead of divided")
    yield Edit(expr(f"({src(left)}) / math.isqrt({src(d)})"), f"the integer square root `math.isqrt({src(d)})`",
               f"math.isqrt rounds down; {fix}", "the scores divided by √d rounded down to an integer")
    yield Edit(expr(f"({src(left)}) * ({src(d)}) ** -1 / 2"), f"`{src(d)} ** -1/2`, which Python reads as ({src(d)} ** -1) / 2",
               f"Write the power in parentheses, `** (-1 / 2)`, or {fix[0].lower()}{fix[1:]}", "the scores multiplied by 1/(2d) instead of 1/√d")


def shape_index(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A size read from the wrong axis or the wrong tensor: ``q.shape[-1]`` -> ``q.shape[-2]`` (T), ``v.shape[-1]``."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"):
        return
    index = int_value(node.slice)
    owner = node.value.value
    if index is None or not isinstance(owner, ast.Name):
        return
    for value in (-1, -2, 0):
        if value != index:
            new = copy.deepcopy(node)
            new.slice = expr(str(value))
            yield Edit(new, f"`{src(new)}` where the lesson uses `{src(node)}`", f"Use `{src(node)}`.",
                       f"a size of {in_words(owner.id, 'an input')} read along axis {value} where the lesson reads its "
                       f"axis {index}")
    for other in site.params:
        if other != owner.id and len(other) <= 2:  # the tensors (q, k, v, x), not flags or sizes
            new = copy.deepcopy(node)
            new.value.value = ast.Name(other, ast.Load())  # type: ignore[attr-defined]
            yield Edit(new, f"`{src(new)}` where the lesson uses `{src(node)}`", f"Use `{src(node)}`.", "a size read from another input than the lesson's")


def mask(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The mask: its diagonal moved, tril/triu swapped, inverted, filled with +inf or a finite number."""
    name = method(node)
    if name in ("tril", "triu"):
        assert isinstance(node, ast.Call)
        for diagonal in (-1, 1):
            new = with_fields(node, keywords=[*copy.deepcopy([k for k in node.keywords if k.arg != "diagonal"]),
                                        ast.keyword("diagonal", expr(str(diagonal)))])
            yield Edit(new, f"`{src(new)}`: the mask's diagonal moved by {diagonal}",
                       f"Position t may look at 0..t, itself included: `{src(node)}`.", f"the mask's diagonal moved by {diagonal}")
    if name == "masked_fill":
        assert isinstance(node, ast.Call)
        if node.args:
            cond = node.args[0]
            flipped = cond.operand if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Invert) \
                else ast.UnaryOp(ast.Invert(), copy.deepcopy(cond))
            yield Edit(with_fields(node, args=[copy.deepcopy(flipped), *copy.deepcopy(node.args[1:])]),
                       "the mask inverted: the allowed positions filled instead of the future ones",
                       f"Fill where the mask is False: `{src(node)}`.", "the mask inverted: the allowed positions filled instead of the future ones")
        if len(node.args) == 2:
            for text, words in FILLS:
                if src(node.args[1]).replace('"', "'") != text:
                    yield Edit(with_fields(node, args=[copy.deepcopy(node.args[0]), expr(text)]), f"masked scores filled with {words} instead of -inf",
                               "Fill with float('-inf'): softmax turns it into a weight of exactly 0.", f"masked scores filled with {words} instead of -inf")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and isinstance(site.parent, ast.Call) \
            and method(site.parent) != "masked_fill":
        yield Edit(copy.deepcopy(node.operand), f"`{src(node.operand)}` where the lesson inverts it", f"Write `{src(node)}`.", "a mask used without inverting it")


def result_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``x.masked_fill(...)`` (or any out-of-place method) whose result is not used: ``x`` comes out unchanged."""
    name = method(node)
    if name is None or name in ("item", "shape") or not isinstance(node.func.value, ast.Name):  # type: ignore[attr-defined]
        return
    receiver = node.func.value  # type: ignore[attr-defined]
    if receiver.id in ("torch", "math", "self", "nn", "F"):
        return
    yield Edit(copy.deepcopy(receiver), f"the result of `{src(node)}` dropped, so `{receiver.id}` is used unchanged",
               f"Methods like `{name}` return a new tensor: use it, `{receiver.id} = {src(node)}`.",
               "the result of a step thrown away, so its input is used unchanged")


def in_place(node: ast.AST, site: Site) -> Iterator[Edit]:
    """An out-of-place method made in-place (``masked_fill`` -> ``masked_fill_``): it writes into the input."""
    name = method(node)
    if name in IN_PLACE:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        new = copy.deepcopy(node)
        new.func.attr = f"{name}_"  # type: ignore[attr-defined]
        yield Edit(new, f"`{name}_` (in place), which writes into the caller's tensor",
                   f"Never write into an input: use `{name}` without the underscore.", "a result written into its input, which changes the caller's tensor")


def in_place_arithmetic(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``scores / s`` done in place (``scores /= s``, ``scores.div_(s)``): the caller's tensor is overwritten."""
    methods = {ast.Div: "div_", ast.Mult: "mul_", ast.Add: "add_", ast.Sub: "sub_"}
    if isinstance(node, ast.BinOp) and type(node.op) in methods and isinstance(node.left, ast.Name) \
            and node.left.id in site.params:
        new = ast.Call(ast.Attribute(ast.Name(node.left.id, ast.Load()), methods[type(node.op)], ast.Load()),
                       [copy.deepcopy(node.right)], [])
        yield Edit(new, f"`{src(node)}` done in place (`{node.left.id} {src(ast.BinOp(ast.Name('x'), node.op, ast.Name('y')))[2:3]}= ...`), "
                        f"which overwrites the caller's `{node.left.id}`",
                   f"Compute a new tensor: `{src(node)}`, never an augmented assignment on an input.",
                   "an input overwritten in place, which changes the caller's tensor")


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
                           f"Return `{element.id}`: `return {src(node)}`.",
                           f"{in_words(other, 'another value')} returned where the lesson returns "
                           f"{in_words(element.id, 'one of its results')}")


def operand_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """One side of ``a - b`` or ``a @ w`` left out: the max not subtracted, a projection skipped."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.MatMult)) and isinstance(node.right, ast.Name):
        what = "not subtracted" if isinstance(node.op, ast.Sub) else "not applied"
        yield Edit(copy.deepcopy(node.left), f"`{node.right.id}` {what} in `{src(node)}`", f"Write `{src(node)}`.",
                   "a term not subtracted" if isinstance(node.op, ast.Sub) else "a projection not applied")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        yield Edit(copy.deepcopy(node.operand), f"the minus sign of `{src(node)}` left out", f"Write `{src(node)}`.", "a minus sign left out")


def applied_twice(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A projection applied twice: ``a @ w`` -> ``a @ w @ w``, ``self.proj(x)`` -> ``self.proj(self.proj(x))``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.right, ast.Name):
        yield Edit(ast.BinOp(copy.deepcopy(node), ast.MatMult(), copy.deepcopy(node.right)),
                   f"`{node.right.id}` applied twice", f"Apply it once: `{src(node)}`.", "a projection applied twice")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "self" and len(node.args) == 1 and not node.keywords:
        yield Edit(ast.Call(copy.deepcopy(node.func), [copy.deepcopy(node)], []),
                   f"`self.{node.func.attr}` applied twice", f"Apply it once: `{src(node)}`.", "a layer applied twice")


def wrong_stage(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A projection applied at the wrong stage: ``merge_heads(out) @ w_o`` -> ``merge_heads(out @ w_o)`` (before
    the merge), ``self.dropout(self.proj(out))`` -> ``self.proj(self.dropout(out))``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.Call) \
            and len(node.left.args) == 1 and isinstance(node.right, ast.Name):
        inner = node.left
        moved = with_fields(inner, args=[ast.BinOp(copy.deepcopy(inner.args[0]), ast.MatMult(), copy.deepcopy(node.right))])
        yield Edit(moved, f"`{node.right.id}` applied inside `{src(inner.func)}(...)` instead of after it",
                   f"Apply it to the result: `{src(node)}`.", "a projection applied before the step it should follow")
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Call) \
            and len(node.args[0].args) == 1 and not node.keywords and on_self(node) and on_self(node.args[0]):
        inner = node.args[0]
        swapped = ast.Call(copy.deepcopy(inner.func), [ast.Call(copy.deepcopy(node.func), [copy.deepcopy(inner.args[0])], [])],
                           copy.deepcopy(inner.keywords))
        first, then = layer_words(site, inner, "one layer"), layer_words(site, node, "the other")
        yield Edit(swapped, f"`{src(inner.func)}` and `{src(node.func)}` applied in the other order", f"Apply them as `{src(node)}`.",
                   f"{first} and {then} applied in the other order" if first != then else "two layers applied in the other order")


def flag_inverted(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A flag read the other way round: ``if causal:`` -> ``if not causal:``."""
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in site.params:
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(ast.Not(), ast.Name(node.test.id, ast.Load()))
        yield Edit(new, f"`{node.test.id}` read the other way round (`if not {node.test.id}:`)",
                   f"Do this step when `{node.test.id}` is True: `if {node.test.id}:`.", "a flag read the other way round: the step done when it is off")


def order_reversed(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The heads (or any loop's items) taken in reverse order: ``for h in self.heads`` -> ``reversed(self.heads)``."""
    if isinstance(node, ast.comprehension) and not isinstance(node.iter, ast.Call):
        new = copy.deepcopy(node)
        new.iter = ast.Call(ast.Name("reversed", ast.Load()), [copy.deepcopy(node.iter)], [])
        yield Edit(new, f"`{src(node.iter)}` taken in reverse order", f"Keep their order: `for ... in {src(node.iter)}`.",
                   "the items (the heads) taken in reverse order")


def names_swapped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A parameter used where another belongs: keys computed with the query projection (``w_k`` -> ``w_q``)."""
    if not (isinstance(node, ast.Name) and node.id in site.params and isinstance(node.ctx, ast.Load)):
        return
    kin = [p for p in site.params if p != node.id and p[:2] == node.id[:2] and len(p) == len(node.id)]
    for other in kin:
        yield Edit(ast.Name(other, ast.Load()), f"`{other}` used where `{node.id}` belongs",
                   f"Use `{node.id}` there.",
                   f"{in_words(other, 'one input')} used in place of {in_words(node.id, 'another')}")


def cast(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The returned tensor cast (float32, float16) or taken out of autograd (``detach``, a NumPy round trip)."""
    if not isinstance(site.parent, ast.Return) or isinstance(node, ast.Tuple) or node is not site.parent.value:
        return
    for cast_to, words in CASTS:
        yield Edit(expr(f"({src(node)}).{cast_to}()"), f"{words} whatever the inputs' dtype",
                   "Keep the inputs' dtype: no .float() / .half() on the result.", f"{words} whatever the inputs' dtype")
    yield Edit(expr(f"({src(node)}).detach()"), "the result detached from autograd",
               "Leave it attached: no .detach() (or torch.no_grad()) on the way.", "the result detached from autograd")
    yield Edit(expr(f"torch.from_numpy(({src(node)}).detach().cpu().numpy())"), "the result taken through NumPy, which leaves autograd and the device",
               "Stay in torch from input to output.", "the result taken through NumPy, which leaves autograd and the device")


def function_swapped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A function for its neighbour: ``log`` -> ``log2`` (entropy in bits), ``tril`` -> ``triu``, ``view`` for
    ``reshape`` (which fails on a transposed tensor), ``nn.ModuleList`` -> a plain list."""
    name = method(node)
    if name in FUNC_SWAPS:
        for other in FUNC_SWAPS[name]:
            new = copy.deepcopy(node)
            new.func.attr = other  # type: ignore[attr-defined]
            yield Edit(new, f"`{other}` where the lesson uses `{name}`", f"Use `{name}`: `{src(node)}`.",
                       FUNCTION_WORDS.get(other, f"a neighbouring function where the lesson uses another"))
    if name in ("reshape", "view"):
        new = copy.deepcopy(node)
        new.func.attr = "view" if name == "reshape" else "reshape"  # type: ignore[attr-defined]
        yield Edit(new, f"`.{new.func.attr}` where the lesson uses `.{name}`", f"Write `{src(node)}`.",  # type: ignore[attr-defined]
                   "a view of a tensor whose memory is not contiguous" if name == "reshape"
                   else "a reshape where the lesson takes a view")
        args = node.args  # type: ignore[attr-defined]
        for i in range(len(args) - 1):
            swapped = copy.deepcopy(node)
            swapped.args[i], swapped.args[i + 1] = swapped.args[i + 1], swapped.args[i]  # type: ignore[attr-defined]
            yield Edit(swapped, f"`{src(swapped)}`: sizes in another order, so channels go to the wrong head",
                       f"Write `{src(node)}`.", "sizes in another order, so channels go to the wrong head")
    if name == "ModuleList" and isinstance(node, ast.Call) and node.args:
        inner = node.args[0]
        listed = ast.ListComp(inner.elt, inner.generators) if isinstance(inner, ast.GeneratorExp) else ast.Call(
            ast.Name("list", ast.Load()), [inner], [])
        yield Edit(copy.deepcopy(listed), "the heads kept in a plain Python list, which nn.Module does not register",
                   "Wrap them in nn.ModuleList so .parameters(), .to() and state_dict see them.",
                   "the heads kept in a plain Python list, which nn.Module does not register")


def einsum_axes(node: ast.AST, site: Site) -> Iterator[Edit]:
    """``torch.einsum`` with the output's axes permuted."""
    if method(node) != "einsum" or not node.args or not isinstance(node.args[0], ast.Constant):  # type: ignore[attr-defined]
        return
    spec = str(node.args[0].value)  # type: ignore[attr-defined]
    if "->" not in spec:
        return
    inputs, output = spec.split("->")
    if len(output) >= 2:
        new = copy.deepcopy(node)
        new.args[0] = ast.Constant(f"{inputs}->{output[:-2]}{output[-1]}{output[-2]}")  # type: ignore[attr-defined]
        yield Edit(new, f"einsum '{new.args[0].value}' with the last two output axes swapped", f"Write '{spec}'.",  # type: ignore[attr-defined]
                   "an einsum with the last two output axes swapped")


OPERATORS: dict[str, Operator] = {
    "dim": dim_argument, "keepdim": keepdim, "reduction": reduction, "untransposed": transpose_dropped, "transpose": transpose, "scale": scale,
    "shape": shape_index, "mask": mask, "dropped": result_dropped, "inplace": in_place, "inplace_arith": in_place_arithmetic,
    "returned": returned_other, "operand": operand_dropped,
    "twice": applied_twice, "stage": wrong_stage, "reversed": order_reversed, "flag": flag_inverted, "swap": names_swapped, "cast": cast, "function": function_swapped, "einsum": einsum_axes,
}
