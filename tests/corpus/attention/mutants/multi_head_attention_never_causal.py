# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: causal|above the diagonal
# clause: multi_head_attention.causal
# diagnosis: multi_head_attention_never_causal
# why: multi_head_attention calls attention with causal=False whatever its own flag says, so every token sees the future
# may_fail: multi_head_attention::test_future_tokens*

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
    q = split_heads(x @ w_q, n_heads)  # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)  # (B, H, T, d_head)
    v = split_heads(x @ w_v, n_heads)  # (B, H, T, d_head)
    out, weights = attention(q, k, v, causal=False)
    return merge_heads(out) @ w_o, weights
