"""Operators for the slips students make: the same mistake as a catalogue entry, found by the code's shape.

``operators`` holds the edits of one node that change what a line computes (a dim, a scale, a mask).
These are the slips issue 39 lists from real submissions, where the code is right line by line and
wrong in what it is given or where a step sits:

- a size or the rank of a tensor where an int parameter belongs (``scores.shape[-1]`` for
  ``head_size``), or another size at a call site (``k.shape[-2]``, ``q.dim()`` for ``q.shape[-1]``);
- a stage moved one step earlier or later (dropout before the softmax);
- a constant where a parameter belongs (``nn.Dropout(0.1)``, ``torch.ones(8, 8)``);
- one projection used for two roles (``self.key(x)`` where ``self.value(x)`` belongs);
- a tensor kept as a parameter, a buffer or a plain attribute where another belongs;
- a list built in reverse order (``outs.insert(0, h(x))``);
- ``torch.no_grad()`` or ``.detach()`` around a stage (only gradients change);
- ``x @ w.T`` where the contract multiplies ``x @ w`` (``F.linear``'s convention).

Node operators (``SLIPS``) have the ``operators.OPERATORS`` signature; function operators
(``FUNCTION_SLIPS``) look at a whole function, as ``family.stage_order`` does. None reads an exercise's
name: a new exercise gets these variants for free.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

from grader.diagnosis.syntax import Edit, Operator, Site, expr, int_value, on_self, src

# The literals students write for a size or a rate when they copy a tutorial's setting instead of passing the
# argument on: the tutorials' block sizes, head sizes and embedding widths (8 … 64) and their dropout rates.
# A handful each, because every one is a variant replayed when an exercise fails.
SIZES = (8, 16, 32, 64)
RATES = (0.0, 0.1, 0.2, 0.5)

FunctionEdit = tuple[ast.FunctionDef, str, str, str, str]  # (edited function, operator, title, fix, effect)
FunctionOperator = Callable[[ast.FunctionDef], Iterator[FunctionEdit]]


# ------------------------------------------------------------------ node operators


def size_at_call(node: ast.AST, site: Site) -> Iterator[Edit]:
    """At a call, a size argument replaced by another tensor's size or by a rank: ``scale_scores(scores,
    q.shape[-1])`` given ``k.shape[-2]`` (the number of keys) or ``q.dim()``."""
    if not (isinstance(site.parent, ast.Call) and node in site.parent.args and _shape_read(node)):
        return
    owner, index = _shape_read(node)  # type: ignore[misc]
    tensors = [p for p in site.params if len(p) <= 2] or [owner]  # the tensors (q, k, v, x), not flags or sizes
    asked = f"the size of `{owner}` along axis {index}"
    for other in dict.fromkeys([owner, *tensors]):
        for value in (-1, -2):
            if (other, value) != (owner, index):
                yield Edit(expr(f"{other}.shape[{value}]"), f"the size of `{other}` along axis {value} passed where the "
                           f"lesson passes {asked}", f"Pass {asked}.",
                           "another size of the inputs passed where the lesson passes the size it asks for")
    yield Edit(expr(f"{owner}.dim()"), f"the rank of `{owner}` (its number of dimensions) passed where the lesson "
               f"passes {asked}", f"Pass {asked}, not the number of dimensions.",
               "a tensor's number of dimensions passed where the lesson passes a size")


def reversed_list(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A list built in reverse order and handed on (``outs.insert(0, h(x))`` in a loop): the items are computed
    in order, so random draws (dropout) happen as in the lesson, and only the list is reversed."""
    if isinstance(node, ast.ListComp) and isinstance(site.parent, ast.Call) and node in site.parent.args:
        yield Edit(ast.Subscript(copy.deepcopy(node), ast.Slice(None, None, ast.UnaryOp(ast.USub(), ast.Constant(1))),
                                 ast.Load()),
                   f"the items of `{src(node)}` put together in reverse order (the first one last)",
                   f"Keep them in order: `{src(node)}`, appending each one at the end.",
                   "the pieces put together in reverse order (the first one last)")


def storage(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A tensor kept as a buffer, a parameter or a plain attribute where the lesson keeps it as another:
    ``self.register_buffer("tril", t)`` <-> ``self.tril = nn.Parameter(t)`` <-> ``self.tril = t``, and a buffer
    registered with ``persistent=False``."""
    kept = _kept_tensor(node)
    if kept is None:
        return
    name, tensor, how = kept
    forms = {
        "buffer": (f"self.register_buffer({name!r}, {src(tensor)})", "a buffer"),
        "parameter": (f"self.{name} = torch.nn.Parameter({src(tensor)})", "a trainable parameter (nn.Parameter)"),
        "attribute": (f"self.{name} = {src(tensor)}", "a plain attribute"),
        "volatile": (f"self.register_buffer({name!r}, {src(tensor)}, persistent=False)",
                     "a buffer registered with persistent=False"),
    }
    fixes = {"buffer": f"Register it as a buffer, self.register_buffer({name!r}, ...): state_dict saves it, .to() "
                       "moves it, and the optimiser leaves it alone.",
             "parameter": "Make it a parameter, nn.Parameter(...): it is learned.",
             "attribute": "Keep it a plain attribute.",
             "volatile": "Register it with persistent=False, as the lesson does."}
    for other, (text, words) in forms.items():
        if other != how:
            yield Edit(ast.parse(text).body[0], f"`{name}` kept as {words} instead of {forms[how][1]}", fixes[how],
                       f"a tensor of the module kept as {words} instead of {forms[how][1]}")


def _kept_tensor(node: ast.AST) -> tuple[str, ast.expr, str] | None:
    """``(name, tensor, how)`` for a statement that keeps a tensor on ``self``; how: buffer, volatile (not
    persistent), parameter, attribute (a ``torch.*(...)`` value assigned)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and on_self(node.value) \
            and node.value.func.attr == "register_buffer" and len(node.value.args) == 2 \
            and isinstance(node.value.args[0], ast.Constant) and isinstance(node.value.args[0].value, str):
        persistent = next((k.value for k in node.value.keywords if k.arg == "persistent"), None)
        volatile = isinstance(persistent, ast.Constant) and persistent.value is False
        return node.value.args[0].value, node.value.args[1], "volatile" if volatile else "buffer"
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
            and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self" \
            and isinstance(node.value, ast.Call):
        func = src(node.value.func)
        if func.endswith("Parameter") and len(node.value.args) == 1:
            return node.targets[0].attr, node.value.args[0], "parameter"
        if src(node.value).startswith("torch.") and not func.startswith("torch.nn"):  # a tensor, not a submodule
            return node.targets[0].attr, node.value, "attribute"
    return None


def shift_dropped(node: ast.AST, site: Site) -> Iterator[Edit]:
    """The max not subtracted before an exponential, however the max is written (``x - x.amax(dim, True)``,
    ``x - x.max(dim, keepdim=True).values``); ``operators.operand_dropped`` covers ``x - row_max``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and not isinstance(node.right, ast.Name) \
            and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("max", "amax")
                    for n in ast.walk(node.right)):
        yield Edit(copy.deepcopy(node.left), f"the max not subtracted in `{src(node)}`",
                   f"Subtract the max first, `{src(node)}`: exp overflows to inf on large scores.",
                   "the row's max not subtracted before the exponential")


SLIPS: dict[str, Operator] = {"size_at_call": size_at_call, "reversed_list": reversed_list, "storage": storage,
                              "shift": shift_dropped}


# ------------------------------------------------------------------ function operators


def size_for_parameter(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """An int parameter (annotated ``int``, no default) replaced at one use by a size or the rank of a tensor
    argument: ``scores / math.sqrt(head_size)`` -> ``scores / math.sqrt(scores.shape[-1])``."""
    tensors = _tensor_params(function)
    read = [t for t in tensors if any(_shape_read(n) and _shape_read(n)[0] == t for n in ast.walk(function))]  # type: ignore[index]
    for param in _annotated(function, "int", with_default=False):
        for i, use in enumerate(_uses(function, param)):
            for tensor in read or tensors[:1]:
                for text, words in ((f"{tensor}.shape[-1]", f"the size of `{tensor}` along axis -1"),
                                    (f"{tensor}.shape[-2]", f"the size of `{tensor}` along axis -2"),
                                    (f"{tensor}.dim()", f"the rank of `{tensor}` (its number of dimensions)")):
                    yield (_replace_use(function, param, i, expr(text)), "size",
                           f"{words} used where the `{param}` argument belongs",
                           f"Use the `{param}` argument: the caller says what it is.",
                           "a size read from an input tensor where the lesson uses the size argument it is given")


def constant_for_parameter(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """A parameter ignored for a constant students write: ``nn.Dropout(0.1)`` where the lesson passes
    ``dropout``, ``torch.ones(8, 8)`` where it passes ``context_length``. Every use at once, as a copied
    setting is. The sizes are the ``int`` parameters without a default (an int with a default is a dim,
    ``family.parameter_ignored``'s), the rates the ``float`` ones with a default."""
    for kind, values in (("int", SIZES), ("float", RATES)):
        for param in _annotated(function, kind, with_default=kind == "float"):
            if not _uses(function, param):
                continue
            for value in values:
                fixed = copy.deepcopy(function)
                for use in _uses(fixed, param):
                    _swap_child(fixed, use, ast.Constant(value))
                yield (fixed, "constant", f"the constant {value} where the `{param}` argument belongs",
                       f"Pass the `{param}` argument on: a fixed {value} is right for one setting only.",
                       f"a fixed {value} used where the lesson uses an argument it is given")


def roles_swapped(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """One projection used for two roles: ``self.key(x)`` where ``self.value(x)`` belongs (submodules called on
    the same input), ``x @ self.w_q`` where ``x @ self.w_k`` belongs (attributes of a kind)."""
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and on_self(n) and len(n.args) == 1
             and not n.keywords]
    attributes = [n for n in ast.walk(function) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                  and n.value.id == "self" and isinstance(n.ctx, ast.Load)]
    callees = {id(c.func) for c in calls}
    for i, call in enumerate(calls):
        for other in dict.fromkeys(c.func.attr for c in calls if src(c.args[0]) == src(call.args[0])):  # type: ignore[attr-defined]
            if other != call.func.attr:  # type: ignore[attr-defined]
                yield (_with_attr(function, call.func, other), "roles", f"`self.{other}` used where `self.{call.func.attr}` "  # type: ignore[attr-defined]
                       "belongs: one projection for two roles", f"Each role has its own projection: `{src(call)}`.",
                       "one projection used for two roles")
    plain = [a for a in attributes if id(a) not in callees]
    for attribute in plain:
        for other in dict.fromkeys(a.attr for a in plain):
            if other != attribute.attr and other[:2] == attribute.attr[:2] and len(other) == len(attribute.attr):
                yield (_with_attr(function, attribute, other), "roles", f"`self.{other}` used where `self.{attribute.attr}` "
                       "belongs: one projection for two roles", f"Use `self.{attribute.attr}` there.",
                       "one weight used for two roles")


def stage_moved(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """A stage moved one step earlier or later: two neighbouring statements that update the same name swapped,
    whatever the update is written as (``wei = wei.masked_fill(...)``, ``wei = torch.softmax(wei, -1)``,
    ``h = self.drop(h)``, ``scores = scores / s``)."""
    body = function.body
    for i in range(len(body) - 1):
        first, second = updated_name(body[i]), updated_name(body[i + 1])
        if first is not None and first == second:
            moved = copy.deepcopy(function)
            moved.body[i], moved.body[i + 1] = moved.body[i + 1], moved.body[i]
            later, earlier = _last_line(body[i]), _last_line(body[i + 1])
            yield (moved, "moved", f"`{earlier}` done before `{later}` instead of after it",
                   f"Keep the lesson's order: `{later}`, then `{earlier}`.",
                   "two steps done in the other order: a step one place earlier than the lesson's")


CUT = "the right values, but no gradient flowing back through one stage (taken out of autograd)"


def gradient_cut(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """``torch.no_grad()`` around a stage (or the whole body) or ``.detach()`` on an intermediate: the values are
    right and no gradient flows back through that stage. ``x = f(...)`` under no_grad and ``x = f(...).detach()``
    behave alike, so an assignment gets one variant that names both."""
    fix = "Leave every stage attached to autograd: no torch.no_grad() and no .detach() on the way."
    for i, stmt in enumerate(function.body):
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, (ast.Call, ast.BinOp)):
            wrapped = copy.deepcopy(function)
            wrapped.body[i] = _no_grad([wrapped.body[i]])
            yield wrapped, "grad", f"`{_last_line(stmt)}` computed under torch.no_grad()", fix, CUT
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, (ast.Call, ast.BinOp)):
            detached = copy.deepcopy(function)
            detached.body[i].value = expr(f"({src(stmt.value)}).detach()")  # type: ignore[attr-defined]
            yield (detached, "grad", f"`{stmt.targets[0].id}` detached from autograd (.detach(), or computed under "
                   "torch.no_grad())", fix, CUT)
    doc = 1 if function.body and isinstance(function.body[0], ast.Expr) \
        and isinstance(function.body[0].value, ast.Constant) else 0
    if len(function.body) > doc + 1:
        whole = copy.deepcopy(function)
        whole.body = [*whole.body[:doc], _no_grad(whole.body[doc:])]
        yield whole, "grad", "the whole computation under torch.no_grad()", fix, CUT


def linear_convention(function: ast.FunctionDef) -> Iterator[FunctionEdit]:
    """``F.linear(x, w)`` (or ``x @ w.T``) where the contract multiplies ``x @ w``: every projection by a weight
    argument transposed, in a function that multiplies by two or more of its arguments (its projections)."""
    params = set(_params(function))
    sites = [n for n in ast.walk(function) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
             and isinstance(n.right, ast.Name) and n.right.id in params]
    if len({n.right.id for n in sites}) < 2:  # type: ignore[attr-defined]
        return
    edited = copy.deepcopy(function)
    for n in ast.walk(edited):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) and isinstance(n.right, ast.Name) and n.right.id in params:
            n.right = ast.Attribute(ast.Name(n.right.id, ast.Load()), "T", ast.Load())
    yield (edited, "linear", "projections that compute x @ wᵀ, as F.linear / nn.Linear's convention does; "
           "the contract multiplies x @ w", "Multiply x @ w with each weight as given, not its transpose.",
           "projections by each weight's transpose, as nn.Linear's convention does, where the contract multiplies "
           "by the weight as given")


FUNCTION_SLIPS: tuple[FunctionOperator, ...] = (size_for_parameter, constant_for_parameter, roles_swapped, stage_moved,
                                               gradient_cut, linear_convention)


# ------------------------------------------------------------------ helpers


def updated_name(stmt: ast.stmt) -> str | None:
    """The name a statement updates from itself (``x = f(x, ...)``, ``x = x.masked_fill(...)``, ``x =
    self.dropout(x)``, ``x = x / s``), alone or as the whole body of an ``if``; None otherwise."""
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse:
        stmt = stmt.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, (ast.Call, ast.BinOp)):
        name = stmt.targets[0].id
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt.value)):
            return name
    return None


def _shape_read(node: ast.AST) -> tuple[str, int] | None:
    """``(tensor, axis)`` for ``t.shape[i]`` or ``t.size(i)``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and isinstance(node.value.value, ast.Name) and int_value(node.slice) is not None:
        return node.value.value.id, int_value(node.slice)  # type: ignore[return-value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and int_value(node.args[0]) is not None:
        return node.func.value.id, int_value(node.args[0])  # type: ignore[return-value]
    return None


def _params(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in function.args.args + function.args.kwonlyargs]


def _annotated(function: ast.FunctionDef, kind: str, *, with_default: bool) -> list[str]:
    """The parameters annotated ``kind`` (``int``, ``float``), with or without a default as asked."""
    args = function.args.args
    defaulted = {a.arg for a in args[len(args) - len(function.args.defaults):]}
    return [a.arg for a in args if a.annotation is not None and src(a.annotation) == kind
            and (a.arg in defaulted) == with_default]


def _tensor_params(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in function.args.args if a.annotation is not None and "Tensor" in src(a.annotation)]


def _uses(function: ast.FunctionDef, name: str) -> list[ast.Name]:
    """Where ``name`` is read, in source order, leaving out f-strings (a message, not a computation)."""
    inside_messages = {id(n) for s in ast.walk(function) if isinstance(s, ast.JoinedStr) for n in ast.walk(s)}
    found = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
             and id(n) not in inside_messages]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _swap_child(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
            elif isinstance(value, list) and any(v is old for v in value):
                value[:] = [new if v is old else v for v in value]


def _replace_use(function: ast.FunctionDef, name: str, index: int, new: ast.AST) -> ast.FunctionDef:
    copied = copy.deepcopy(function)
    _swap_child(copied, _uses(copied, name)[index], new)
    return copied


def _with_attr(function: ast.FunctionDef, node: ast.Attribute, attr: str) -> ast.FunctionDef:
    """``function`` with the attribute ``node`` (found by position) renamed to ``attr``."""
    copied = copy.deepcopy(function)
    for n in ast.walk(copied):
        if isinstance(n, ast.Attribute) and (n.lineno, n.col_offset, n.attr) == (node.lineno, node.col_offset, node.attr):
            n.attr = attr
    return copied


def _no_grad(body: list[ast.stmt]) -> ast.With:
    return ast.copy_location(ast.With([ast.withitem(expr("torch.no_grad()"))], body, type_comment=None), body[0])


def _last_line(stmt: ast.stmt) -> str:
    return src(stmt).splitlines()[-1].strip()
