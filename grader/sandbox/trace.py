"""Facts about the randomness in one forward, recorded in the child: where dropout runs and who seeds the RNG.

A dropout check that sees only outputs can tell that something is wrong, not where: dropout on the masked
scores, on the values, on the output, at a rate written in the code, or a ``torch.manual_seed`` in forward
all show up as "the output is not what dropout on the weights gives". The child records what forward did
(each dropout call: the module it ran in, its rate, its training flag, the shape and kind of the tensor it
was given and the module that made it, the module whose forward returned its result as it is; the module whose forward reset the RNG) and the judge
decides what that means (``grader/checks/attention_modules/dropout_sites.py``). Facts only: no verdicts here.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch.overrides import TorchFunctionMode

DROPOUTS = frozenset({"dropout", "dropout_", "feature_dropout", "alpha_dropout"})
SOFTMAXES = frozenset({"softmax", "_softmax"})
FUSED = "scaled_dot_product_attention"  # F.scaled_dot_product_attention(..., dropout_p=p): dropout inside
FILL = -1e8  # an entry at or below this is a mask's fill (-inf, finfo.min, -1e9), not a score


def _is_probability_rows(t: torch.Tensor) -> bool:
    """Every row is finite, non-negative and sums to 1: attention weights after a softmax."""
    if t.dim() < 2 or not t.is_floating_point() or t.device.type == "meta" or not t.numel():
        return False
    d = t.detach().double()
    return bool(torch.isfinite(d).all() and (d >= 0).all() and torch.allclose(d.sum(-1), torch.ones((), dtype=d.dtype),
                                                                               atol=1e-3))


def _fill(t: torch.Tensor) -> str | None:
    """The mask's fill the tensor holds: "-inf", "finite" (finfo.min, -1e9), or None (no entry at or below FILL)."""
    if not t.is_floating_point() or t.device.type == "meta" or not t.numel():
        return None
    d = t.detach()
    if bool((d == float("-inf")).any()):
        return "-inf"
    return "finite" if bool((d <= FILL).any()) else None


def _rate_and_flag(args: tuple, kwargs: dict) -> tuple[float | None, bool | None]:
    p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
    training = kwargs.get("training", kwargs.get("train", args[2] if len(args) > 2 else True))
    try:
        return float(p), bool(training)
    except (TypeError, ValueError):
        return None, None


class _Recorder(TorchFunctionMode):
    """Records dropout and softmax calls made anywhere in forward (nn.Dropout, F.dropout, torch.dropout)."""

    def __init__(self, x: Any, stack: list[str], made: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.x, self.stack, self.made = x, stack, made
        self.calls: list[dict[str, Any]] = []
        self.results: list[Any] = []
        self.softmaxes = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        out = func(*args, **kwargs)
        if name in SOFTMAXES:
            self.softmaxes += 1
        elif name == FUSED and args and isinstance(args[0], torch.Tensor):  # its dropout acts on its own weights
            p = kwargs.get("dropout_p", args[4] if len(args) > 4 else 0.0)
            self.calls.append({"module": self.stack[-1] if self.stack else "", "function": name, "p": float(p),
                               "training": True, "shape": list(args[0].shape), "after_softmaxes": self.softmaxes,
                               "probabilities": False, "fill": None, "is_input": False, "returned_by": None,
                               "input_from": None})
            self.results.append(out)
        elif name in DROPOUTS and args and isinstance(args[0], torch.Tensor):
            t = args[0]
            p, training = _rate_and_flag(args, kwargs)
            self.calls.append({
                "module": self.stack[-1] if self.stack else "", "function": name, "p": p, "training": training,
                "shape": list(t.shape), "after_softmaxes": self.softmaxes, "probabilities": _is_probability_rows(t),
                "fill": _fill(t), "is_input": t is self.x, "returned_by": None,
                "input_from": next((n for n, o in reversed(self.made) if o is t), None),
            })
            self.results.append(out)
        return out


@contextmanager
def recording(module: torch.nn.Module, x: Any, seed: int) -> Iterator[dict[str, Any]]:
    """Run forward inside this to fill the yielded dict: ``dropout_calls`` (see ``_Recorder``) and
    ``reseeded`` ({module, seed}: the innermost module whose own forward left torch's seed other than it found
    it, e.g. a ``torch.manual_seed(1337)`` in forward; None when none did)."""
    stack: list[str] = []
    seen: list[int] = []
    made: list[tuple[str, Any]] = []  # (module, its output): what a dropout was given, by name
    facts: dict[str, Any] = {"dropout_calls": [], "reseeded": None}

    def pre(name: str):
        def hook(_m, _a):
            stack.append(name)
            seen.append(torch.default_generator.initial_seed())
        return hook

    def post(name: str):
        def hook(_m, _a, _o):
            if stack:
                stack.pop()
            made.append((name, _o))
            if not isinstance(_m, torch.nn.Dropout):  # whose forward returned a dropout's result as it is
                for call, result in zip(recorder.calls, recorder.results):
                    if result is _o and call["returned_by"] is None:
                        call["returned_by"] = name
            before = seen.pop() if seen else seed
            now = torch.default_generator.initial_seed()
            if now != before and facts["reseeded"] is None:
                facts["reseeded"] = {"module": name, "seed": int(now)}
        return hook

    handles = []
    for name, m in module.named_modules():
        handles.append(m.register_forward_pre_hook(pre(name)))
        handles.append(m.register_forward_hook(post(name)))
    recorder = _Recorder(x, stack, made)
    try:
        with recorder:
            yield facts
    finally:
        for handle in handles:
            handle.remove()
        facts["dropout_calls"] = recorder.calls

