# source: classic (no public example found)
# exercise: attention
# accept: causal=false|causal is false|without (the )?mask|unmasked|no mask|not (causal|masked)|(un|not |never )scaled|skips? (the )?scal|scal\w* only|inside|nested|indent
# why: the scaling sits inside the causal branch, so causal=False, scale=True returns unscaled attention
# base: base_colab_cells

def attention(q, k, v, causal=True, scale=True):
    d = q.size(-1)
    T = q.size(-2)
    s = attention_scores(q, k)
    if causal:
        if scale:
            s = scale_scores(s, d)
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    out = mix_values(w, v)
    return out, w
