"""How far float arithmetic may move a softmax when its scores are large: tolerances derived, not guessed.

A check that injects scores of magnitude ~1e4 judges a property (masking before the
softmax, stability), not the digits. Every method that is exact in real numbers and
stable in float32 must pass: subtracting each row's max before masking or after it,
``exp(x - logsumexp(x))``, a finite fill such as ``finfo.min``. They differ only in
*where* they round, and a difference such as ``s - max`` computed near the magnitude
``M`` of the largest score is known only to about one unit in the last place there,
``eps · M`` (float32 keeps about three decimals at 1e4). So the tolerance of such a
check is ``eps · M``, propagated to the weights and to what they mix; a fixed
``rtol=1e-4`` would fail the sound "max before the mask" idiom at 1e4 (0.5704 against
0.5705) while a 0/0 or a leak of weight to the future is off by far more than this.
"""

from __future__ import annotations

import math

import torch


def score_rounding(magnitude: float, dtype: torch.dtype = torch.float32) -> float:
    """The error one score difference may carry when it is computed in ``dtype`` among scores of
    size ``magnitude``: one unit in the last place there (twice the half-ulp of a single rounding,
    for methods that round twice, such as max-subtraction before and again after the mask)."""
    return torch.finfo(dtype).eps * float(magnitude)


def softmax_relative_tolerance(magnitude: float, dtype: torch.dtype = torch.float32) -> float:
    """The relative error a softmax weight may carry when its scores are rounded at ``magnitude``.

    A weight ``exp(a) / sum(exp(b))`` whose exponents are each off by at most ``d`` is off by
    a factor within ``exp(±2d)``: ``d`` in its numerator and ``d`` in the sum. Mixed values
    ``sum_j w_j v_j`` are then off by at most this times ``max |v|``.
    """
    return math.expm1(2 * score_rounding(magnitude, dtype))
