"""Relations read from the answers: the student's results as the reference's, transformed.

A bug written another way than the mutation operators write it often still shows as a plain
relation between the student's answers and the reference's on the same recorded requests: the
results are the reference's times a size of the inputs (``scores / d`` where the lesson divides by
``sqrt(d)``), the reference's on transformed inputs (``q`` and ``k`` swapped, the heads in reverse
order), or the reference's results transformed (the two returned values in the other order, a
float16 round trip). A ``Relation`` is one such statement. It duck-types ``catalogue.Mistake`` and
``family.Variant`` for ``Diagnoser`` (id, exercise, title, explanation, operator) and answers a
request from the reference's answers (``answer``), so the diagnoser checks it exactly as it checks a
variant: it must give every answer of every check of its exercise. ``relation_search`` generates
and prunes the family; this module says what each relation computes and how it reads.

Every size is read from the request (``Quantity``) and named as the reference's docstring names it,
so a relation holds across requests of different sizes or not at all.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from grader.diagnosis.answers import Answer

GIVES_NOTHING = Answer(raised=("(no answer: the relation gives NaN or cannot apply)", False, ""))
Replay = Callable[[dict[str, Any]], Answer]  # a request -> the reference's (cached) answer


@dataclass(frozen=True)
class Quantity:
    """A size read from a request: an axis of a tensor argument, its rank, an int argument, or the position
    (counted from 1) along an axis of the output (a ``ramp``: row t of a running mean averages t + 1 values)."""

    name: str  # as the reference's docstring writes it (``d``, ``T``) or ``q.shape[-1]``
    source: str  # "axis" | "rank" | "int" | "ramp"
    param: str = ""
    axis: int = 0
    text: str = ""  # what it is, for the legend: "the size of `q`'s axis -1"

    def value(self, bound: dict[str, Any], shape: tuple[int, ...] | None = None) -> Any:
        """Its value on a request (None where the request has no such size)."""
        if self.source == "ramp":
            if shape is None or len(shape) < -self.axis:
                return None
            n = shape[self.axis]
            return torch.arange(1, n + 1, dtype=torch.float64).reshape(n, *([1] * (-self.axis - 1)))
        arg = bound.get(self.param)
        if self.source == "int":
            return arg if isinstance(arg, int) and not isinstance(arg, bool) and arg > 0 else None
        if not isinstance(arg, torch.Tensor):
            return None
        if self.source == "rank":
            return arg.dim() or None
        return arg.shape[self.axis] if arg.dim() >= -self.axis and arg.shape[self.axis] > 0 else None


POWERS = {1.0: "{}", 0.5: "√{}", 0.25: "{}^¼"}


@dataclass(frozen=True)
class Factor:
    """``num / den``, each a quantity to a power (None for 1)."""

    num: tuple[Quantity, float] | None
    den: tuple[Quantity, float] | None

    def value(self, bound: dict[str, Any], shape: tuple[int, ...] | None = None) -> Any:
        out: Any = 1.0
        for term, sign in ((self.num, 1), (self.den, -1)):
            if term is not None:
                v = term[0].value(bound, shape)
                if v is None:
                    return None
                out = out * (v ** (sign * term[1]) if isinstance(v, torch.Tensor) else float(v) ** (sign * term[1]))
        return out

    def text(self) -> str:
        def term(t: tuple[Quantity, float]) -> str:
            name = t[0].name if len(t[0].name) <= 3 else f"({t[0].name})"
            return POWERS[t[1]].format(name)
        if self.num and self.den:
            return f"{term(self.num)}/{term(self.den)}"
        return term(self.num) if self.num else f"1/{term(self.den)}" if self.den else "1"

    def quantities(self) -> list[Quantity]:
        return [t[0] for t in (self.num, self.den) if t is not None]


INPUT_KINDS = ("cast", "scaled", "swapped", "transposed", "flipped", "blocks", "axes", "folded", "shifted", "diagonal")
OUTPUT_KINDS = ("factor", "returned", "out_transposed", "dtype", "reduced", "squeezed")
KIND_ORDER = ("returned", "factor", "squeezed", "out_transposed", "reduced", "dtype", "cast", "swapped", "transposed",
              "scaled", "axes", "folded", "flipped", "blocks", "shifted", "diagonal")  # the plainest statement first


@dataclass(frozen=True)
class Relation:
    """One relation for one exercise: ``kind`` with its ``spec`` (see ``relation_search`` for the family)."""

    id: str
    assignment: str
    exercise: str
    title: str
    explanation: str
    said: str  # "the reference's with `q` × 1/√d": what follows "your results are "
    kind: str
    spec: tuple[Any, ...]
    signature: inspect.Signature = field(compare=False, repr=False)
    operator: str = "relation"
    where_differs: bool = True  # a request the student answers as the reference does needs no explaining

    def bind(self, message: dict[str, Any]) -> inspect.BoundArguments | None:
        if message.get("op") != "call":
            return None  # a module probe: no relation is read from it (fails closed)
        try:
            bound = self.signature.bind(*message.get("args") or [], **message.get("kwargs") or {})
        except TypeError:
            return None
        bound.apply_defaults()
        return bound

    def answer(self, message: dict[str, Any], reference: Replay) -> Answer:
        """What the student would answer if this relation held: computed from the reference's answers."""
        bound = self.bind(message)
        if bound is None:
            return GIVES_NOTHING
        try:
            if self.kind in INPUT_KINDS:
                return _finite(self._on_inputs(message, bound, reference))
            ref = reference(message)
            if ref.raised:
                return ref
            return _finite(Answer(outputs=tuple(self._on_outputs(ref.outputs, bound.arguments)),
                                  modified=ref.modified, structure=ref.structure))
        except (RuntimeError, ValueError, IndexError, TypeError):
            return GIVES_NOTHING  # the relation does not apply to this request

    def _on_inputs(self, message: dict[str, Any], bound: inspect.BoundArguments, reference: Replay) -> Answer:
        args = dict(bound.arguments)
        kind, spec = self.kind, self.spec
        if kind == "diagonal":
            param, k = spec
            n = args[param]
            ref = reference(_rebound(message, self.signature, {**args, param: n + abs(k)}))
            if ref.raised:
                return ref
            def window(x: Any) -> Any:
                return x[..., k:k + n, :n] if k > 0 else x[..., :n, -k:-k + n]
            return Answer(outputs=tuple(window(x) for x in ref.outputs), modified=ref.modified, structure=ref.structure)
        if kind == "cast":  # every floating input in a lower precision, the results cast back to the inputs' dtype
            floating = {p: v for p, v in args.items() if isinstance(v, torch.Tensor) and v.is_floating_point()}
            if not floating:
                return GIVES_NOTHING
            dtype = next(iter(floating.values())).dtype
            ref = reference(_rebound(message, self.signature, {**args, **{p: v.to(getattr(torch, spec[0]))
                                                                          for p, v in floating.items()}}))
            back = tuple(x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in ref.outputs)
            return Answer(ref.raised, back, ref.modified, ref.structure) if not ref.raised else ref
        param = spec[0]
        x = args[param]
        if kind == "scaled":
            f = spec[1].value(args)
            if f is None:
                return GIVES_NOTHING
            args[param] = x * f
        elif kind == "swapped":
            args[param], args[spec[1]] = args[spec[1]], x
        elif kind == "transposed":
            args[param] = x.transpose(-2, -1)
        elif kind == "flipped":
            args[param] = x.flip(spec[1])
        elif kind == "blocks":
            n = args[spec[2]]
            size = x.shape[spec[1]]
            if not isinstance(n, int) or n < 2 or size % n:
                return GIVES_NOTHING
            args[param] = torch.cat(list(reversed(x.split(size // n, dim=spec[1]))), dim=spec[1])
        elif kind == "axes":
            args[param] = x.transpose(0, 1)
        elif kind == "folded":
            args[param] = x.reshape(x.shape[1], x.shape[0], *x.shape[2:]).transpose(0, 1)
        elif kind == "shifted":
            args[param] = x.roll(spec[1], dims=-2)
        return reference(_rebound(message, self.signature, args))  # transformed copies: written into as the reference writes

    def _on_outputs(self, outputs: tuple[Any, ...], args: dict[str, Any]) -> list[Any]:
        kind, spec = self.kind, self.spec
        out = list(outputs)
        if kind == "returned":
            if len(out) != 2:
                raise ValueError("not two outputs")
            return out[::-1]
        index = spec[0]
        targets = range(len(out)) if index is None else [index]
        for i in targets:
            x = out[i]
            if not isinstance(x, torch.Tensor) or not x.is_floating_point():
                if index is None and kind in ("factor", "dtype"):
                    continue
                raise TypeError("not a floating tensor")
            if kind == "factor":
                f = spec[1].value(args, tuple(x.shape))
                if f is None:
                    raise ValueError("no such size")
                out[i] = (x.double() * f).to(x.dtype) if isinstance(f, torch.Tensor) else x * f
            elif kind == "out_transposed":
                out[i] = x.transpose(-2, -1)
            elif kind == "dtype":
                out[i] = x.to(getattr(torch, spec[1]))
            elif kind == "reduced":
                out[i] = getattr(x, spec[1])(dim=spec[2], keepdim=spec[3])
            elif kind == "squeezed":
                out[i] = x.squeeze()
        return out

    def evidence(self, message: dict[str, Any]) -> str:
        """The sizes behind a factor on one request: ' (here d = 4 and T = 5: × 0.4472)'; '' for other kinds."""
        factor = self.spec[1] if self.kind in ("factor", "scaled") else None
        bound = self.bind(message)
        if factor is None or bound is None:
            return ""
        sizes = [f"{q.name} = {q.value(bound.arguments)}" for q in factor.quantities() if q.source != "ramp"]
        value = factor.value(bound.arguments)
        times = f": × {value:.4g}" if isinstance(value, float) else ""
        return f" (here {' and '.join(sizes)}{times})" if sizes else ""


def _rebound(message: dict[str, Any], signature: inspect.Signature, args: dict[str, Any]) -> dict[str, Any]:
    """The request with new argument values, passed as the student's call passed them (positional or keyword)."""
    names = list(signature.parameters)[:len(message.get("args") or [])]
    return {**message, "args": [args[n] for n in names], "kwargs": {k: args[k] for k in message.get("kwargs") or {}}}


def _finite(answer: Answer) -> Answer:
    """A NaN never matches a relation: an answer with one is no answer."""
    for x in answer.outputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.device.type != "meta" and bool(torch.isnan(x).any()):
            return GIVES_NOTHING
    return answer


def sentence(named: list[Relation], example: str = "") -> str:
    """'Likely mistake: your results are the reference's <relation>: <fix>' for one relation, or for a few that
    the recorded answers cannot tell apart (said as equivalent, never one picked)."""
    shown = f" {example}" if example else ""
    if len(named) == 1:
        return f"Likely mistake: your results are {named[0].said}. {named[0].explanation}{shown}"
    listed = "; or, equally, ".join(r.said for r in named)
    return (f"Likely mistake: your results are {listed} (your answers fit each of these equally well). "
            f"{named[0].explanation}{shown}")


def legend(quantities: list[Quantity]) -> str:
    """'d is the size of `q`'s axis -1, T the size of ...': what each size in a factor is."""
    seen = list(dict.fromkeys(q for q in quantities if q.text))
    return "; ".join(f"{q.name} is {q.text}" for q in seen)
