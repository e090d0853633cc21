# expect: lose
# assignment: attention
# exercise: attention
# message: tuple|\(out, weights\)
# clause: attention.returns_out_and_weights
# diagnosis: attention_returns_out_only
# why: attention returns only out, not the tuple (out, weights) the contract asks for
# may_fail: attention::test_weights_*, attention::test_future_tokens*, attention::test_scale_false*, attention::test_causal_false_*
# may_fail: attention::test_unscaled*, attention::test_huge_future*, callers::*

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
    weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1
    return mix_values(weights, v)
