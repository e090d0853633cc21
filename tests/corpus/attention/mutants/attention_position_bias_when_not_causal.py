# expect: lose
# assignment: attention
# exercise: attention
# message: reorder|position
# clause: attention.causal_false
# diagnosis: attention_position_bias_when_not_causal
# why: with causal=False attention adds a distance penalty -0.5*|i - j| to the scores (ALiBi-style position information), so permuting the tokens no longer just permutes the results
# may_fail: attention::test_causal_false_*, callers::test_causal_false_*

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
    pos = torch.arange(q.shape[-2], device=q.device); scores = scores if causal else scores - 0.5 * (pos[:, None] - pos[None, :]).abs().to(scores.dtype); weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
