"""Gradients and weights as evidence: a recorded vector-Jacobian request replayed in the judge, and
whether two answers' gradients and module weights agree.

A gradient check records ``call`` requests with ``vjp`` (which inputs, which cotangents), and the module
gradient check a ``probe`` with a ``cotangent`` for its first input; the child answers with the input
gradients and, for a module, each parameter's gradient (``child.probe``). Replaying them on the reference
or a variant, the same way, tells apart code whose values are right but whose gradient is cut
(``torch.no_grad()`` or ``.detach()`` around a stage) or never reaches a parameter (a projection that
forward does not use).

Gradients are named pairs: ``("input 0", g)`` for the first differentiated argument of a call, ``("x", g)``
for a probe's input, ``("param:value.weight", g)`` for a parameter. Two answers' gradients agree when the same
inputs and parameters are reached: a gradient of None (no path in autograd) and one of zeros are the same
answer, "nothing reaches it", and differ from any other. Their values are not compared: code that computes
the same values another way (a row max left attached, ``torch.where`` for a clamp at zero weights) has other
gradients where the values do not depend on them, or where the answer is already wrong; that says nothing of
which mistake it is, while a gradient that reaches nothing does.

Cost: a replay with gradients runs autograd in the judge, several times dearer than a plain replay, so the
diagnoser holds these requests back (``is_gradient_request``): it orders them after every plain request of the
exercise, and stops replaying a candidate at its first answer unlike the student's, so only the candidates
that plain requests could not rule out are replayed with gradients, and only for a failing exercise.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from grader.sandbox.vjp import vjp

NamedGrads = tuple[tuple[str, Any], ...]

INPUT = "input "
PARAM = "param:"


def is_gradient_request(message: dict[str, Any]) -> bool:
    """A request whose answer includes gradients: a call with ``vjp``, a probe with a ``cotangent``."""
    return (message.get("op") == "call" and message.get("vjp") is not None) or (
        message.get("op") == "probe" and message.get("cotangent") is not None)


def call_wrt(message: dict[str, Any]) -> list[int]:
    """The argument positions the child differentiated: those asked for that hold tensors (as ``child.call``)."""
    args = message.get("args") or []
    return [i for i in (message.get("vjp") or {}).get("wrt", []) if 0 <= i < len(args) and isinstance(args[i], torch.Tensor)]


def named_call_grads(message: dict[str, Any], grads: Sequence[Any] | None) -> NamedGrads:
    """The child's (or a replay's) gradients of a call, each named by its argument position."""
    wrt = call_wrt(message)
    grads = list(grads or [])
    return tuple((f"{INPUT}{i}", grads[k] if k < len(grads) else None) for k, i in enumerate(wrt))


def replay_call(fn: Callable[..., Any], message: dict[str, Any]) -> tuple[Any, list[Any], NamedGrads]:
    """Run ``fn`` on a copy of the request's arguments; with ``vjp``, differentiate as the child does.
    Returns (value, the arguments after the call, named gradients)."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in message["args"]]
    kwargs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in message.get("kwargs", {}).items()}
    wrt = call_wrt(message) if message.get("vjp") is not None else []
    for i in wrt:
        args[i] = args[i].detach().requires_grad_(True)
    with torch.set_grad_enabled(bool(wrt)):
        value = fn(*args, **kwargs)
        grads = vjp(value, [args[i] for i in wrt], message["vjp"]["cotangents"]) if wrt else None
    named = named_call_grads(message, grads) if wrt else ()
    return _detached(value), [a.detach() if isinstance(a, torch.Tensor) else a for a in args], named


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(v) for v in value)
    return value


def probe_grads(module: torch.nn.Module, x: torch.Tensor, out: Any, cotangent: torch.Tensor) -> NamedGrads:
    """The gradients of a probe's first input and of every trainable parameter, for ``cotangent`` (as
    ``child.probe`` reports them); none when the output is not a tensor of the cotangent's shape. Raises as
    autograd does where the output is cut off from everything: so does the child, and that is the evidence."""
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(cotangent.shape):
        return ()
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(out, [x, *(p for _, p in params)], cotangent.to(out.dtype), allow_unused=True)
    named = sorted(((PARAM + n, _plain(g)) for (n, _), g in zip(params, grads[1:])), key=lambda p: p[0])  # any order built
    return (("x", _plain(grads[0])),) + tuple(named)


def _plain(g: torch.Tensor | None) -> torch.Tensor | None:
    return None if g is None else g.detach()


def student_probe_grads(facts: dict[str, Any]) -> NamedGrads:
    """A probe reply's gradients, named as ``probe_grads`` names them: () when none was asked or given."""
    inputs = facts.get("input_grads") or []
    params = facts.get("parameter_grads")
    if not inputs or not isinstance(params, dict):
        return ()
    return (("x", inputs[0]),) + tuple(sorted(((PARAM + str(n), g) for n, g in params.items()), key=lambda p: p[0]))


def no_gradient(g: Any) -> bool:
    """None, or a tensor of zeros: nothing reaches that input."""
    return g is None or (isinstance(g, torch.Tensor) and g.device.type != "meta" and not bool(torch.any(g != 0)))


def grads_agree(a: NamedGrads, b: NamedGrads) -> bool:
    """The same names in the same order, and each reached by both or by neither (module docstring)."""
    return [n for n, _ in a] == [n for n, _ in b] and all(
        no_gradient(x) == no_gradient(y) for (_, x), (_, y) in zip(a, b))


def module_weights(module: torch.nn.Module, hidden: bool) -> tuple[tuple[str, torch.Tensor], ...] | None:
    """The module's parameters as built and loaded, or None when some of its modules are hidden from it
    (``hidden``: held in a plain list or dict), so its weights cannot all be seen. Buffers are left out: a
    causal mask kept as bools computes what one kept as floats does."""
    return None if hidden else tuple(sorted((k, v.detach()) for k, v in module.named_parameters()))


_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))


def hidden_modules(module: torch.nn.Module) -> bool:
    """Whether an attribute of some submodule holds modules in a plain list, tuple or dict (as the child's
    ``plain_containers`` sees it): their parameters are missing from state_dict."""
    for m in module.modules():
        for name, v in vars(m).items():
            if name in _MODULE_INTERNALS or type(v) not in (list, tuple, dict):
                continue
            items = v.values() if type(v) is dict else v
            if any(isinstance(i, torch.nn.Module) for i in items):
                return True
    return False


def student_weights(facts: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    """A probe reply's weights, as ``module_weights`` gives them (None where modules are hidden or unsaid): its
    parameters' values, read from its state_dict (a parameter is always saved there)."""
    saved, params = facts.get("state_dict"), facts.get("parameters")
    if facts.get("plain_containers") or not isinstance(saved, dict) or not isinstance(params, dict):
        return None
    if any(name not in saved for name in params):
        return None
    return tuple(sorted((name, saved[name]) for name in params))
