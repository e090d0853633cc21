# expect: lose
# assignment: attention
# exercise: attention
# message: shape
# diagnosis: attention_mask_adds_batch_dim
# why: attention masks with causal_mask(...).unsqueeze(0), a 3-D mask that adds a batch dim to unbatched (T, d) input
# may_fail: none

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
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device).unsqueeze(0))
    weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1
    return mix_values(weights, v), weights
