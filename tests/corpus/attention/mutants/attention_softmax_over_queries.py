# expect: lose
# assignment: attention
# exercise: attention
# message: sum to 1|weights|differs
# diagnosis: attention_softmax_over_queries
# why: attention takes the softmax over dim=-2 (the queries) instead of the last dim (the keys)
# may_fail: attention::test_weights_rows_sum_to_one, attention::test_future_tokens*, callers::test_future_tokens*

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
    weights = softmax(scores, dim=-2)  # over the queries
    return mix_values(weights, v), weights
