# expect: below_full
# assignment: attention
# base: reference
# message: `softmax` is not defined
# failing_only: softmax
# why: a solution that never defines softmax (attention normalises inline); only softmax's checks fail, each saying "`softmax` is not defined", every other function earns full marks

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

_reference_softmax = softmax  # noqa: F821 - attention keeps working without the name `softmax`
del softmax  # noqa: F821 - the point of this case: the name is gone
