# source: https://github.com/karpathy/ng-video-lecture/pull/6
# exercise: multi_head_attention
# accept: sqrt\(?C|d_model|head.?size|per.head|C ?// ?n_heads|whole|total|all channels
# why: scales each head's scores by sqrt(C), the model width, instead of sqrt(C // n_heads)
# base: base_where


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    C = x.shape[-1]
    qh = split_heads(torch.matmul(x, w_q), n_heads)
    kh = split_heads(torch.matmul(x, w_k), n_heads)
    vh = split_heads(torch.matmul(x, w_v), n_heads)
    s = scale_scores(attention_scores(qh, kh), C)
    if causal:
        s = apply_mask(s, causal_mask(x.shape[1], device=x.device))
    w = softmax(s, dim=-1)
    out = mix_values(w, vh)
    return torch.matmul(merge_heads(out), w_o), w
