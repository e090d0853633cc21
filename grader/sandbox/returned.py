"""What a student's function returned, checked at the proxy and followed into the judge's arithmetic.

A check does arithmetic on what the student returned: it indexes the weights, compares the out with
the reference's, multiplies two results together. On a value of the wrong kind (``None``, a list, a
NumPy array, a tuple of three) or of the wrong shape (``(weights, out)`` where ``(out, weights)`` is
the contract) that arithmetic raises torch's own error, and a check's error that is not an assertion
reads as the grader's bug ("internal check error"). It is the student's, and the student should read
what their function returned. So, at the one door between the checks and the submission (``proxy``):

* ``kind_problem``: the value should be what the contract's ``returns:`` (assignments.yaml) declares,
  one tensor or a tuple of as many tensors as it names. The proxy notes each one that is not; an output
  check requires the contract's kind (``check_kind``); a check whose own code then raises on such a value
  (``None.double()``) ends as a ``MalformedReturn`` naming it (``explained``), never an internal error. A
  property check that did not need the value (its inputs left alone) still judges its property.
* ``follow``: each tensor returned is a ``Returned``, a tensor that remembers which function returned it
  and what that whole return was. Torch ops on it run as on a plain tensor (their results remember too);
  an op that raises (a shape that does not broadcast, a dtype that does not multiply) raises a
  ``MalformedReturn`` naming that function and its return instead of torch's error.

``MalformedReturn`` is an assertion, so a check that falls back to the contract where the student's
helper fails (``except (StudentError, AssertionError)``) falls back here too, and a check that cannot
falls back fails with the student's sentence; it is a ``StudentProblem``, so the pictures say it too.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Sequence

import torch

from grader.sandbox.errors import StudentProblem
from grader.sandbox.protocol import Opaque

# torch's own errors on values it cannot combine; anything else from a check is still the grader's bug
OP_ERRORS = (RuntimeError, TypeError, ValueError, IndexError)


class MalformedReturn(StudentProblem, AssertionError):
    """A student's function returned a value a check could not use as the contract's: the check fails with this."""

    status = "failed"


def describe(value: Any, depth: int = 0) -> str:
    """A returned value in words: 'a float32 tensor of shape (2, 5, 6)', 'None', 'a tuple (a ..., a ...)'."""
    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    if value is None:
        return "None"
    if isinstance(value, Opaque):
        return f"a {value.type_name}"
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__
        if depth or len(value) > 4:
            return f"a {kind} of {len(value)}"
        return f"a {kind} ({', '.join(describe(v, depth + 1) for v in value)})" if value else f"an empty {kind}"
    if isinstance(value, bool):
        return f"the bool {value}"
    if isinstance(value, (int, float)):
        return f"the Python {type(value).__name__} {value:g}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return f"a {type(value).__module__.split('.')[0]} {type(value).__name__} of shape {shape}"
    return f"a {type(value).__name__}"


def expected(names: Sequence[str]) -> str:
    """The contract's return in words: 'a torch.Tensor', 'a tuple (out, weights) of torch.Tensors'."""
    return "a torch.Tensor" if len(names) == 1 else f"a tuple ({', '.join(names)}) of torch.Tensors"


def kind_problem(fn: str, value: Any, names: Sequence[str]) -> str:
    """'' where ``value`` is what ``fn``'s contract returns (a tensor, or a tuple of ``len(names)`` tensors); else
    the sentence that says what it returned instead."""
    if len(names) == 1:
        ok = isinstance(value, torch.Tensor)
    else:
        ok = (isinstance(value, tuple) and len(value) == len(names)
              and all(isinstance(v, torch.Tensor) for v in value))
    return "" if ok else f"`{fn}` returned {describe(value)}; expected {expected(names)}"


def check_kind(fn: str, value: Any, names: Sequence[str]) -> None:
    """Raise ``MalformedReturn`` unless ``value`` is what ``fn``'s contract returns (``kind_problem``): what an
    output check asks; a property check uses what it can of the value."""
    problem = kind_problem(fn, value, names)
    if problem:
        raise MalformedReturn(problem)


# what a check's own code raises on a value of the wrong kind (None.double(), a list's .shape, unpacking three)
KIND_ERRORS = (*OP_ERRORS, AttributeError, KeyError)


def explained(error: BaseException | None, problems: Sequence[str]) -> BaseException | None:
    """A check's ending, where it raised an error of its own code on a value of the wrong kind that the student's
    function returned (``problems``, the proxy's ``malformed``): the student's failure naming that value, not an
    internal error. Anything else as it is."""
    if error is None or not problems or isinstance(error, (AssertionError, StudentProblem)):
        return error
    if not isinstance(error, KIND_ERRORS):
        return error
    return MalformedReturn(f"{problems[0]}: this check could not go on with it "
                           f"({type(error).__name__}: {_first_line(error)})")


class Returned(torch.Tensor):
    """A tensor a student's function returned, with ``origin``: who returned it, and what that whole return was."""

    origin: str = ""

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        try:
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **kwargs)
        except OP_ERRORS as exc:
            origins = _origins(args, kwargs)
            raise MalformedReturn(
                f"{'; '.join(origins)}: this check could not compute with it as the contract's output "
                f"(torch: {_first_line(exc)}). Return what the contract names, in its order, with the shapes "
                "and dtype the lesson gives") from None
        origin = _origins(args, kwargs)
        return _mark(result, origin[0]) if origin else result


def follow(who: str, value: Any, names: Sequence[str], given: str = "") -> Any:
    """``value`` with each tensor in it a ``Returned`` that says ``who`` (```attention```) returned it
    (``given``: on what)."""
    whole = f"{who}{' on ' + given if given else ''} returned {describe(value)}"
    if len(names) > 1 and isinstance(value, tuple):
        whole += f" as ({', '.join(names[:len(value)])})"
    if isinstance(value, torch.Tensor):
        return _mark(value, whole)
    if isinstance(value, (tuple, list)):
        return type(value)(_mark(v, whole) if isinstance(v, torch.Tensor) else v for v in value)
    return value


def plain(value: Any) -> Any:
    """A ``Returned`` as the plain tensor it wraps (what goes back to the child, or to the reference)."""
    if isinstance(value, Returned):
        with torch._C.DisableTorchFunctionSubclass():
            return value.as_subclass(torch.Tensor)
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _mark(value: Any, origin: str) -> Any:
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            marked = value.as_subclass(Returned)
        marked.origin = origin
        return marked
    if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
        return type(value)(_mark(v, origin) for v in value) if type(value) in (tuple, list) else value
    return value


def _origins(args: Sequence[Any], kwargs: dict) -> list[str]:
    found: list[str] = []
    for a in (*args, *kwargs.values()):
        items = a if isinstance(a, (tuple, list)) else (a,)
        for x in items:
            if isinstance(x, Returned) and x.origin and x.origin not in found:
                found.append(x.origin)
    return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


Outputs = list[tuple[tuple[int, ...], str]]  # each output's shape and dtype name


def contract_outputs(reference: ModuleType) -> Callable[..., Outputs | None]:
    """What the reference returns for a call given as plain facts (``callees.plain_facts``): each output's shape
    and dtype, worked out on the meta device (no data, no cost to speak of); None where it cannot say. With
    ``part`` (the probe that ran: ``cls``, ``args``, ``kwargs``, ``dtype``, ``run``, and the part's ``path``), ``name``
    is a module class and the call its forward, as the reference's ``cls`` built with those arguments has it."""
    def outputs(name: str, args: list, kwargs: dict, part: dict | None = None) -> Outputs | None:
        try:
            fn = getattr(reference, name, None) if part is None else _reference_part(reference, name, part)
            if not callable(fn):
                return None
            built = [_meta(a) for a in args]
            named = {k: _meta(v) for k, v in kwargs.items()}
            if any(isinstance(a, dict) for a in (*built, *named.values())):
                return None  # an argument that was neither a tensor nor plain data: no contract answer
            value = fn(*built, **named)
        except Exception:  # noqa: BLE001 - the reference cannot take these arguments: nothing to compare with
            return None
        outs = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(o, torch.Tensor) for o in outs):
            return None
        return [(tuple(o.shape), str(o.dtype).removeprefix("torch.")) for o in outs]
    return outputs


def _reference_part(reference: ModuleType, name: str, part: dict) -> torch.nn.Module | None:
    """The reference's module of class ``name`` inside its ``part["cls"]`` built (on the meta device) from the
    probe's arguments: the one at the student's ``path`` (``heads.0``), else the first of that class."""
    cls = getattr(reference, str(part.get("cls")), None)
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        return None
    with torch.device("meta"):
        root = cls(*(part.get("args") or []), **(part.get("kwargs") or {}))
    if part.get("dtype"):
        root = root.to(getattr(torch, str(part["dtype"])))
    if part.get("run"):
        root = root.get_submodule(str(part["run"]))
    found = dict(root.eval().named_modules()).get(str(part.get("path")))
    if type(found).__name__ != name:
        found = next((m for _, m in root.named_modules() if type(m).__name__ == name), None)
    return found


def not_the_contracts(callee: dict, expected: Outputs, names: Sequence[str]) -> str:
    """Where a callee's return (as ``callees`` reports it) is not the contract's: the contract's in words; ''
    where it is."""
    got = [(tuple(o["shape"]), o["dtype"]) if isinstance(o, dict) and "shape" in o else None
           for o in callee.get("outputs") or []]
    kind_ok = callee.get("kind") == ("tuple" if len(names) > 1 else "Tensor") or (
        len(names) == 1 and callee.get("kind") in ("Parameter",))
    if kind_ok and got == expected:
        return ""
    each = [f"a {dtype} tensor of shape {shape}" for shape, dtype in expected]
    if len(names) == 1:
        return each[0]
    return f"a tuple ({', '.join(f'{n}: {e}' for n, e in zip(names, each))})"


def _meta(fact: Any) -> Any:
    """A tensor's facts as an empty tensor of that shape and dtype on the meta device; anything else as it is."""
    if isinstance(fact, dict) and "shape" in fact and "dtype" in fact:
        return torch.empty(fact["shape"], dtype=getattr(torch, str(fact["dtype"])), device="meta")
    return fact
