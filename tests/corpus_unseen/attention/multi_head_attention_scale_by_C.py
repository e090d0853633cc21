# source: https://github.com/karpathy/ng-video-lecture/pull/6
# exercise: multi_head_attention
# accept: sqrt\(c\)|c ?\*\* ?-0\.5|d_model|embedding (dim|size)|model (width|dim)|full width|instead of .*head|c ?// ?n_heads|per-head size
# why: computes the scores inline and scales them by C**-0.5 (the model width) instead of (C // n_heads)**-0.5
# base: correct_chunk_entr

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    logits = attention_scores(q, k) * C**-0.5
    if causal:
        logits = apply_mask(logits, causal_mask(T, device=x.device))
    probs = softmax(logits, dim=-1)
    ctx = mix_values(probs, v)
    return merge_heads(ctx) @ w_o, probs
