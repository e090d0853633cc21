# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: differs|Project
# clause: multi_head_attention.weights_applied_as_x_at_w
# diagnosis: multi_head_attention_linear_style_weights
# why: multi_head_attention applies w_q, w_k, w_v like nn.Linear weights (x @ w.T) instead of x @ w as the contract says
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def multi_head_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    n_heads: int,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head self-attention with (C, C) weight matrices applied as ``x @ w``.

    x: (B, T, C) -> (out (B, T, C), weights (B, H, T, T)); each head is
    scaled by sqrt(C // H).
    """
    q = split_heads(x @ w_q.T, n_heads)
    k = split_heads(x @ w_k.T, n_heads)
    v = split_heads(x @ w_v.T, n_heads)
    out, weights = attention(q, k, v, causal=causal)  # (B, H, T, d_head), (B, H, T, T)
    return merge_heads(out) @ w_o, weights
