# expect: partial
# assignment: attention
# base: reference
# status: timeout
# message: still running after .*endless loop
# why: softmax spins forever (capped at 60 s of wall time); its checks must time out and every other function still be graded

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product self-attention.

    q, k: (..., T, d), v: (..., T, d_v) -> (out (..., T, d_v), weights (..., T, T)).
    Order: scores, scale, mask, softmax, mix.
    """
    scores = attention_scores(q, k)  # (..., T, T)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = _reference_softmax(scores, dim=-1)  # (..., T, T), rows sum to 1
    return mix_values(weights, v), weights

import time

import torch

_reference_softmax = softmax  # noqa: F821 - attention keeps a working softmax; only `softmax` itself hangs


def softmax(scores, dim=-1):
    start = time.monotonic()
    total = 0
    for _ in range(10**12):  # "while True", but a regression cannot hang the suite for more than a minute
        if time.monotonic() > start + 60:
            break
        total += 1
    return torch.zeros_like(scores)
