# expect: lose
# assignment: attention
# exercise: attention
# message: NaN|-inf before the softmax
# clause: attention.causal
# diagnosis: attention_renormalises_after_softmax
# why: softmax over all positions first, then zero the future and renormalise each row; equal to the right answer until a future score is ~1e4 larger, when every allowed exp() underflows and the row becomes 0/0
# may_fail: attention::test_huge_future*

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
        pass  # no mask on the scores...
    weights = softmax(scores, dim=-1); weights = weights.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0) if causal else weights; weights = weights / weights.sum(-1, keepdim=True)  # ...zero the future, renormalise
    return mix_values(weights, v), weights
