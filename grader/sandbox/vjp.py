"""A vector-Jacobian product as the grader asks for one: in the sandboxed child for the student's code, and in
the judge when diagnosis replays the same request on the reference or a variant (``grader.diagnosis.gradients``),
so both compute it the same way."""

from __future__ import annotations

from typing import Any, Sequence

import torch


def vjp(result: Any, inputs: Sequence[torch.Tensor], cotangents: Any) -> list[torch.Tensor | None]:
    """The input gradients for ``cotangents``: each output paired with a cotangent of its own shape (an output
    of another shape, a malformed return the judge describes, gets none), None for an input autograd does not
    reach. Raises as autograd does (an output cut off from every input): in the judge, that is evidence too."""
    outputs = result if isinstance(result, (tuple, list)) else (result,)
    cots = cotangents if isinstance(cotangents, (tuple, list)) else (cotangents,)
    pairs = [(o, c) for o, c in zip(outputs, cots)
             if c is not None and isinstance(o, torch.Tensor) and tuple(o.shape) == tuple(c.shape)]
    if not pairs:
        return [None for _ in inputs]
    grads = torch.autograd.grad([o for o, _ in pairs], list(inputs), [c.to(o.dtype) for o, c in pairs], allow_unused=True)
    return [None if g is None else g.detach() for g in grads]
