"""Rounding is not a mistake: a student's answer that differs from a mistake's only by float rounding matches it.

Two float32 computations of the same formula written in another order (a loop over heads against a batched
matmul, ``einsum`` against ``@``) round differently, and on a sensitive request (large unscaled scores, a
saturated softmax) the difference exceeds the dtype's tolerance. The checks compare with values computed in
float64, so their verdicts do not see it; the diagnosis compares the student's float32 answer with a
variant's float32 replay, and would. So where the two are near, the variant is replayed once more with its
float inputs in float64, and the student's answer matches when it is within the dtype's tolerance of that
float64 answer plus twice the variant's own float32 rounding error (how far its float32 answer is from its
float64 one): rounding the variant itself makes there, the student may make too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from grader.checks.helpers import TOLERANCES

NEAR = 1e-2  # a difference above 1% of the values' size is a different answer, never rounding: not replayed
WIDE = torch.float64


def promoted(message: dict[str, Any]) -> dict[str, Any] | None:
    """A plain call with its floating tensors in float64; None for anything else (a gradient request, a probe,
    a call with no floating tensor)."""
    if message.get("op") != "call" or message.get("vjp") is not None:
        return None

    def wide(x: Any) -> Any:
        return x.to(WIDE) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != WIDE else x
    args = [wide(a) for a in message.get("args") or []]
    kwargs = {k: wide(v) for k, v in (message.get("kwargs") or {}).items()}
    if all(a is b for a, b in zip(args, message.get("args") or [])) and \
            all(kwargs[k] is v for k, v in (message.get("kwargs") or {}).items()):
        return None
    return {**message, "args": args, "kwargs": kwargs}


def _floats(outputs: tuple[Any, ...]) -> bool:
    return all(isinstance(x, torch.Tensor) and x.is_floating_point() and x.device.type != "meta" for x in outputs)


def near(student: Any, variant: Any) -> bool:
    """Both answers are float tensors of the same shapes and dtypes, written into alike, and within ``NEAR`` of
    each other relative to their size: the only kind of difference rounding can make."""
    if student.raised or variant.raised or len(student.outputs) != len(variant.outputs) or not student.outputs:
        return False
    if student.modified != variant.modified or student.structure != variant.structure or student.grads:
        return False
    if not (_floats(student.outputs) and _floats(variant.outputs)):
        return False
    # On the answers' float64 copies, made once per answer for ``answers.same`` (``Answer.compared``): this is asked
    # of every pair that ``same`` finds apart, so its cost is that of a few NumPy operations on small arrays.
    for (key_s, s64), (key_v, v64) in zip(student.compared, variant.compared):
        if key_s[2] != key_v[2] or key_s[1] != key_v[1]:  # shape, dtype
            return False
        if not np.array_equal(np.isnan(s64), np.isnan(v64)):
            return False
        finite = np.isfinite(s64) & np.isfinite(v64)
        if not np.array_equal(np.nan_to_num(s64[~finite]), np.nan_to_num(v64[~finite])):
            return False
        if finite.any() and float(np.abs(s64[finite] - v64[finite]).max()) > NEAR * (1.0 + float(np.abs(v64[finite]).max())):
            return False
    return True


def within_rounding(student: Any, variant: Any, wide: Any) -> bool:
    """The student's answer is the variant's up to rounding: within the dtype's tolerance of the variant's
    float64 answer (``wide``), plus twice the variant's own float32 error, element by element."""
    if wide.raised or len(wide.outputs) != len(student.outputs):
        return False
    for s, v, w in zip(student.outputs, variant.outputs, wide.outputs):
        if not isinstance(w, torch.Tensor) or w.shape != s.shape:
            return False
        rtol, atol = TOLERANCES.get(s.dtype, TOLERANCES[torch.float32])
        s64, v64, w64 = (t.detach().cpu().double() for t in (s, v, w))
        finite = torch.isfinite(s64) & torch.isfinite(w64)
        slack = atol + rtol * w64.abs() + 2 * (v64 - w64).abs()
        if not bool(((s64 - w64).abs() <= slack)[finite].all()):
            return False
    return True
