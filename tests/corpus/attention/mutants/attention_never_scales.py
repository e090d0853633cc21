# expect: lose
# assignment: attention
# exercise: attention
# message: scal|sqrt
# diagnosis: attention_never_scales
# why: attention forgets to scale: scale=True divides by nothing
# may_fail: callers::test_scores_scaled*, attention::test_unscaled_weights_saturate

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
        scores = scores
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1
    return mix_values(weights, v), weights
