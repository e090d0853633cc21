"""Which relation (``relations.Relation``) the answers of one failing exercise show, found numerically.

The family of an exercise is generated from the reference function's signature and docstring and from
the arguments of one recorded request, never from the exercise's name: factors from the sizes of its
arguments (named as the docstring names its axes: ``q: (..., T, d)`` gives ``T`` and ``d``), the
transforms every tensor argument or output admits. It is pruned on the first request where the
student's answer is not the reference's (cheap arithmetic, a few replays), then checked on every
answer of the exercise. A relation is kept only when it is told apart from a plain constant (a factor
must take at least two values over the requests it explains) and named only with the few that the
answers cannot tell from it (``MAX_EQUIVALENT``), never picked from many.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from dataclasses import replace
from itertools import combinations
from typing import Any, Callable, Sequence

import torch

from grader.checks.helpers import TOLERANCES
from grader.diagnosis.answers import Answer, same
from grader.diagnosis.relations import KIND_ORDER, POWERS, Factor, Quantity, Relation, Replay, legend

# Input scalings each cost one replay of the reference on the first differing request: one per distinct
# factor value and argument, at most this many (a few ms each on the checks' small tensors).
MAX_SCALED_REPLAYS = 240
# More relations than this fitting the answers equally well say nothing certain: none is named.
MAX_EQUIVALENT = 3
REDUCTIONS = ("sum", "mean")
DTYPES = ("float16", "bfloat16", "float32", "float64")

Gives = Callable[[Relation, Sequence[tuple[dict[str, Any], str, Answer]]], bool]


def axis_names(fn: Any) -> tuple[dict[str, dict[int, str]], dict[int, str], list[str]]:
    """From the docstring: per parameter, axis (from the end) -> name; the output's axes; the outputs' names.

    Reads ``q, k: (..., T, d)``, ``weights (..., T, S)``, a leading ``(B, T, C) -> ...`` (the first
    parameter's) and ``-> (out (..., T, d_v), weights ...)``. Names that are not identifiers (``C // H``)
    and ``...`` are left out."""
    doc = inspect.getdoc(fn) or ""
    params = list(inspect.signature(fn).parameters)
    found: dict[str, dict[int, str]] = {}

    def axes(shape: str) -> dict[int, str]:
        items = [s.strip() for s in shape.split(",")]
        return {i - len(items): s for i, s in enumerate(items) if s.isidentifier()}

    for names, shape in re.findall(r"((?:\w+\s*,\s*)*\w+)\s*:?\s*\(([^()]*)\)", doc.split("->")[0] if "->" in doc else doc):
        for name in re.split(r"\s*,\s*", names):
            if name in params and name not in found:
                found[name] = axes(shape)
    lead = re.match(r"\s*\(([^()]*)\)\s*->", doc)
    if lead and params and params[0] not in found:
        found[params[0]] = axes(lead.group(1))
    after = doc.split("->", 1)[1] if "->" in doc else ""
    out = re.match(r"[^(]*\((?:\w+\s+\()?([^()]*)\)", after)
    returned = re.findall(r"(\w+)\s+\(", after.split(".")[0]) if after else []
    return found, axes(out.group(1)) if out else {}, returned


def quantities(fn: Any, bound: dict[str, Any]) -> tuple[list[Quantity], list[Quantity]]:
    """The sizes a factor may be made of (scalar) and the positions along the output's last two axes (ramps)."""
    named, out_axes, _ = axis_names(fn)
    found: dict[str, Quantity] = {}
    first_tensor = ""
    for param, value in bound.items():
        if isinstance(value, torch.Tensor):
            first_tensor = first_tensor or param
            axes = named.get(param) or {-1: f"{param}.shape[-1]", -2: f"{param}.shape[-2]"}
            for axis, name in sorted(axes.items(), reverse=True):
                where = "last axis" if axis == -1 else f"axis {axis}"
                found.setdefault(name, Quantity(name, "axis", param, axis, f"the size of `{param}`'s {where}"))
        elif isinstance(value, int) and not isinstance(value, bool):
            found.setdefault(param, Quantity(param, "int", param, 0, f"the `{param}` argument"))
    if first_tensor:
        name = f"{first_tensor}.dim()"
        found[name] = Quantity(name, "rank", first_tensor, 0, f"the number of axes of `{first_tensor}`")
    ramps = [Quantity(f"position in {out_axes[a]}" if a in out_axes else f"position along axis {a}", "ramp", "", a,
                      f"counted from 1 along the output's {'last axis' if a == -1 else f'axis {a}'}") for a in (-1, -2)]
    return list(found.values()), ramps


def factors(scalars: list[Quantity], ramps: list[Quantity]) -> list[Factor]:
    """Every ``num / den`` of two different terms (a quantity to the power 1, 1/2 or 1/4, or 1)."""
    terms: list[tuple[Quantity, float] | None] = [None, *((q, p) for q in scalars for p in POWERS),
                                                  *((r, 1.0) for r in ramps)]
    return [Factor(a, b) for a in terms for b in terms
            if (a or b) and not (a and b and a[0] == b[0]) and not (b and b[0].source == "ramp")]


class Builder:
    """Makes the relations of one exercise: ids, the sentence each says, its fix."""

    def __init__(self, fn: Any, exercise: str, assignment: str) -> None:
        self.exercise, self.assignment = exercise, assignment
        self.signature = inspect.signature(fn)
        self.returned = axis_names(fn)[2]
        self.single = False  # one output: said as 'results', not 'output 0' (set by ``family``)

    def output(self, index: int | None) -> str:
        if index is None or (self.single and index == 0):
            return "results"
        return f"`{self.returned[index]}`" if index < len(self.returned) else f"output {index}"

    def make(self, kind: str, spec: tuple[Any, ...]) -> Relation:
        said, explanation = self._words(kind, spec)
        detail = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(_slug(s) for s in spec)).strip("_")
        digest = hashlib.blake2b(repr(spec).encode(), digest_size=4).hexdigest()  # ``-1`` and ``1`` slug alike
        return Relation(f"relation-{self.exercise}-{kind}-{detail}-{digest}", self.assignment, self.exercise,
                        f"`{self.exercise}`: your results are {said}", explanation, said, kind, spec, self.signature)

    def _words(self, kind: str, spec: tuple[Any, ...]) -> tuple[str, str]:
        if kind in ("factor", "scaled"):
            f: Factor = spec[1]
            where = f"with `{spec[0]}` × {f.text()}" if kind == "scaled" else (
                f"× {f.text()}" if spec[0] is None else f"with {self.output(spec[0])} × {f.text()}")
            num = f.num and POWERS[f.num[1]].format(f.num[0].name)
            den = f.den and POWERS[f.den[1]].format(f.den[0].name)
            obj = f" `{spec[0]}` (or what is computed from it)" if kind == "scaled" else ""
            how = (f"dividing{obj} by {den} where the reference divides by {num}" if num and den else
                   f"dividing{obj} by {den} once more than the reference" if den else
                   f"multiplying{obj} by {num} (or leaving out a division by it)")
            return (f"the reference's {where}",
                    f"That is what {how} gives. Fix: scale by exactly what the lesson asks for this step "
                    f"(scores by 1/√d_head, a mean by the number of values averaged), once. Here {legend(f.quantities())}.")
        if kind == "swapped":
            return (f"the reference's with `{spec[0]}` and `{spec[1]}` swapped",
                    f"Fix: pass `{spec[0]}` and `{spec[1]}` where the lesson uses each.")
        if kind == "transposed":
            return (f"the reference's with `{spec[0]}` transposed (its last two axes exchanged)",
                    f"Fix: use `{spec[0]}` with its axes in the order the contract gives them.")
        if kind == "flipped":
            return (f"the reference's with `{spec[0]}` reversed along its axis {spec[1]}",
                    f"Fix: keep `{spec[0]}` in its order along axis {spec[1]}.")
        if kind == "blocks":
            return (f"the reference's with the `{spec[2]}` blocks of `{spec[0]}`'s axis {spec[1]} in reverse order",
                    "Fix: keep the blocks in their order (heads are concatenated in order: head h at position h).")
        if kind == "axes":
            return (f"the reference's with `{spec[0]}`'s first two axes exchanged",
                    f"Fix: keep `{spec[0]}`'s first two axes in their order.")
        if kind == "folded":
            return (f"the reference's with `{spec[0]}` read with its first two axes in the other order",
                    "That is what a reshape (or view) that mixes two axes instead of exchanging them gives. "
                    "Fix: exchange axes with transpose or permute, then reshape.")
        if kind == "shifted":
            return (f"the reference's with `{spec[0]}` shifted by {spec[1]} position(s) along its axis -2",
                    "Fix: keep each position where it is.")
        if kind == "diagonal":
            k = spec[1]
            return (f"the reference's with the diagonal moved by {k:+d} (row t reaches position t{k:+d})",
                    "Fix: token t may look at positions 0..t, itself included: the lower triangle with its diagonal.")
        if kind == "returned":
            order = f" ({', '.join(f'`{n}`' for n in self.returned)})" if len(self.returned) == 2 else ""
            return ("the reference's with its two returned values in the other order",
                    f"Fix: return them in the contract's order{order}.")
        if kind == "cast":
            return (f"the reference's computed in {spec[0]} and cast back",
                    f"Fix: compute in the inputs' dtype, not in {spec[0]}.")
        which = self.output(spec[0])
        if kind == "out_transposed":
            return (f"the reference's with {which} transposed (last two axes exchanged)",
                    "Fix: return the axes in the contract's order.")
        if kind == "dtype":
            return (f"the reference's {which} as {spec[1]}", f"Fix: return the inputs' dtype, not {spec[1]}.")
        if kind == "reduced":
            verb = "summed" if spec[1] == "sum" else "averaged"
            return (f"the reference's {which} {verb} over axis {spec[2]}",
                    f"Fix: keep axis {spec[2]}: the contract returns it whole.")
        return (f"the reference's {which} with {'their' if which == 'results' else 'its'} size-1 axes removed",
                "Fix: keep every axis the contract returns, those of size 1 included.")


def _slug(value: Any) -> str:
    if isinstance(value, Factor):
        return "x" + value.text().replace("√", "sqrt").replace("^¼", "_q").replace("/", "_over_")
    return str(value)


def family(fn: Any, builder: Builder, bound: dict[str, Any], n_outputs: int) -> list[Relation]:
    """Every relation but the input scalings (``scaled_family``) for a request with these arguments."""
    tensors = [p for p, v in bound.items() if isinstance(v, torch.Tensor)]
    ints = [p for p, v in bound.items() if isinstance(v, int) and not isinstance(v, bool)]
    scalars, ramps = quantities(fn, bound)
    builder.single = n_outputs == 1
    made = [builder.make("factor", (i, f)) for i in [None, *(range(n_outputs) if n_outputs > 1 else [])]
            for f in factors(scalars, ramps)]
    made += [builder.make("swapped", (a, b)) for a, b in combinations(tensors, 2)
             if bound[a].dim() == bound[b].dim()]
    for p in tensors:
        nd = bound[p].dim()
        made += [builder.make("transposed", (p,))] if nd >= 2 else []
        made += [builder.make("flipped", (p, a)) for a in range(max(0, nd - 4), nd)]
        made += [builder.make("blocks", (p, a, n)) for a in range(nd) for n in ints]
        made += [builder.make(k, (p,)) for k in ("axes", "folded")] if nd >= 3 else []
        made += [builder.make("shifted", (p, k)) for k in (1, -1)] if nd >= 2 else []
    made += [builder.make("diagonal", (n, k)) for n in ints for k in (1, -1, 2, -2)]
    made += [builder.make("returned", ())] if n_outputs == 2 else []
    for i in range(n_outputs):
        made += [builder.make("out_transposed", (i,)), builder.make("squeezed", (i,))]
        made += [builder.make("reduced", (i, r, a, keep)) for r in REDUCTIONS for a in range(-4, 0) for keep in (False, True)]
        made += [builder.make("dtype", (i, d)) for d in DTYPES]
    made += [builder.make("cast", (d,)) for d in ("float16", "bfloat16")]
    return made


def scaled_family(fn: Any, builder: Builder, bound: dict[str, Any]) -> list[list[Relation]]:
    """The input scalings, grouped by the factor's value on this request (one replay per group)."""
    scalars, _ = quantities(fn, bound)
    groups: dict[tuple[str, float], list[Relation]] = {}
    for p, v in bound.items():
        if not (isinstance(v, torch.Tensor) and v.is_floating_point()):
            continue
        for f in factors(scalars, []):
            value = f.value(bound)
            if value is not None and 1 / 64 <= value <= 64 and abs(value - 1) > 1e-9:
                groups.setdefault((p, round(value, 9)), []).append(builder.make("scaled", (p, f)))
    return list(groups.values())[:MAX_SCALED_REPLAYS]


def find(fn: Any, exercise: str, assignment: str, evidence: Sequence[tuple[dict[str, Any], str, Answer]],
         differing: Sequence[tuple[dict[str, Any], str, Answer]], reference: Replay, gives: Gives) -> list[Relation]:
    """The relations that give every answer of the exercise (``gives``), told apart from a constant, or []:
    the plainest kind that fits, with at most ``MAX_EQUIVALENT`` equivalent statements of it."""
    first = next((e for e in differing if not e[2].raised), differing[0] if differing else None)
    if first is None or first[0].get("op") != "call":
        return []
    builder = Builder(fn, exercise, assignment)
    try:
        bound = builder.signature.bind(*first[0].get("args") or [], **first[0].get("kwargs") or {})
    except TypeError:
        return []
    bound.apply_defaults()
    ref = reference(first[0])
    n_outputs = 0 if ref.raised else len(ref.outputs)
    fits = [r for r in family(fn, builder, bound.arguments, n_outputs) if gives(r, [first])]
    for group in scaled_family(fn, builder, bound.arguments):
        if gives(group[0], [first]):
            fits += group
    fits = [r for r in fits if gives(r, evidence) and _told_apart(r, differing)]
    for kind in KIND_ORDER:
        kept = [r for r in fits if r.kind == kind]
        if kept:
            if len(kept) == 1 and kind == "factor" and kept[0].spec[0] is None:
                return [_against_input(fn, builder, kept[0], differing, reference)]
            return kept if len(kept) <= MAX_EQUIVALENT else []
    return []


def _against_input(fn: Any, builder: Builder, relation: Relation,
                   differing: Sequence[tuple[dict[str, Any], str, Answer]], reference: Replay) -> Relation:
    """Where the reference's result is one argument times a size (``scores / sqrt(head_size)``), say both
    scales: 'your results are `scores` × 1/head_size^¼; the reference's are `scores` × 1/√head_size'. The
    relation itself is unchanged; only its words, and only when each scale is one expression on every request."""
    bound = [relation.bind(m) for m, _, _ in differing]
    if any(b is None for b in bound):
        return relation
    args = [b.arguments for b in bound]
    scalars, _ = quantities(fn, args[0])
    ranked = sorted(factors(scalars, []), key=lambda f: (f.num is not None) + (f.den is not None))

    def scale_of(param: str, outputs: list[Any]) -> Factor | None:
        for f in ranked:
            values = [f.value(a) for a in args]
            if all(v is not None and isinstance(o, torch.Tensor) and isinstance(a[param], torch.Tensor)
                   and o.shape == a[param].shape and o.dtype in TOLERANCES
                   and torch.allclose(o.double(), a[param].double() * v, *TOLERANCES[o.dtype])
                   for v, o, a in zip(values, outputs, args)):
                return f
        return None

    for param, value in args[0].items():
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            continue
        theirs = scale_of(param, [reference(m).outputs[0] if reference(m).outputs else None for m, _, _ in differing])
        mine = scale_of(param, [answer.outputs[0] if answer.outputs else None for _, _, answer in differing]) if theirs else None
        if theirs and mine:
            said = f"`{param}` × {mine.text()}, where the reference's are `{param}` × {theirs.text()}"
            return replace(relation, said=said, title=f"`{builder.exercise}`: your results are {said}",
                           explanation=relation.explanation.split(". ", 1)[-1])  # the 'That is what ...' said above
    return relation


def _told_apart(relation: Relation, differing: Sequence[tuple[dict[str, Any], str, Answer]]) -> bool:
    """A factor must take two values or more over the requests it explains (a ramp does within one): one
    value alone is not told from a constant the student wrote."""
    if relation.kind not in ("factor", "scaled"):
        return True
    values: set[float] = set()
    for message, _, answer in differing:
        bound = relation.bind(message)
        if bound is None:
            continue
        index = relation.spec[0] if relation.kind == "factor" and relation.spec[0] is not None else 0
        out = answer.outputs[index] if index < len(answer.outputs) else None
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else None
        value = relation.spec[1].value(bound.arguments, shape)
        if isinstance(value, torch.Tensor):
            values.update(round(float(v), 9) for v in value.flatten())
        elif value is not None:
            values.add(round(value, 9))
    return len(values) >= 2


def differs(answer: Answer, reference: Answer) -> bool:
    return not same(answer, reference, words=reference.raised is None)
