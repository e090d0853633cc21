# expect: lose
# assignment: attention
# exercise: attention
# message: sum to 1|rows?
# diagnosis: attention_mask_after_softmax
# why: attention applies the causal mask after softmax by zeroing future weights, so rows no longer sum to 1
# may_fail: attention::test_weights_rows_sum_to_one, attention::test_future_tokens*, attention::test_huge_future*
# may_fail: callers::test_future_tokens*

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
        pass  # no mask before the softmax...
    weights = softmax(scores, dim=-1); weights = weights.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0) if causal else weights  # ...zeros after it
    return mix_values(weights, v), weights
