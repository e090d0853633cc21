# source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/80
# exercise: multi_head_attention
# accept: residual|skip|adds? (the )?(input|x)|\+ ?x\b|plus (the )?input|input (is )?added
# why: adds the input x to the projected output (the block's residual connection) inside multi_head_attention
# base: base_defensive

def multi_head_attention(
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    n_heads: int,
    causal: bool = True,
) -> Tuple[Tensor, Tensor]:
    assert x.dim() == 3, "x must be (B, T, C)"
    C = x.shape[-1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        assert w.shape == (C, C), f"{name} must be ({C}, {C})"
    q = split_heads(x @ w_q, n_heads)  # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    heads_out, weights = attention(q, k, v, causal=causal)
    out = merge_heads(heads_out) @ w_o + x  # (B, T, C), residual as in the paper's figure
    return out, weights
