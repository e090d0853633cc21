# expect: lose
# assignment: attention
# exercise: attention
# message: second call on the same inputs gives a different out
# diagnosis: none (the answer moves from call to call: no fixed mistake reproduces noise)
# why: attention adds a little Gaussian noise to its output ("dropout, as I read about"), so it is not deterministic; the worked example must say so, not tell the student to mix the values
# may_fail: callers::*

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
    return mix_values(weights, v) + 1e-3 * torch.randn_like(mix_values(weights, v)), weights
