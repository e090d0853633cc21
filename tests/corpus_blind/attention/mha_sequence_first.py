# source: https://github.com/om-ai-lab/OmDet/issues/19
# exercise: multi_head_attention
# accept: batch.?first|\(T, ?B|sequence.first|seq.first|batch (axis|dim)|across (the )?batch|transpos|swap|time (axis|dim)|dim(ension)?s? 0 and 1
# why: transposes x to (T, B, C) as nn.MultiheadAttention expects without batch_first, so attention runs across the batch instead of across time
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
    # PyTorch's nn.MultiheadAttention works on (T, B, C) unless batch_first=True
    x_tbc = x.transpose(0, 1)  # (T, B, C)
    q = split_heads(x_tbc @ w_q, n_heads)
    k = split_heads(x_tbc @ w_k, n_heads)
    v = split_heads(x_tbc @ w_v, n_heads)
    heads_out, weights = attention(q, k, v, causal=causal)
    out = merge_heads(heads_out) @ w_o  # (T, B, C)
    return out.transpose(0, 1), weights
