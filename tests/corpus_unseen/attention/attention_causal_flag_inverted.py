# source: classic (no public example found)
# exercise: attention
# accept: invert|revers|opposite|not causal|causal ?= ?false|flag
# why: the condition is inverted: the mask is applied when causal=False and skipped when causal=True
# base: correct_head_loop

def attention(q, k, v, causal=True, scale=True):
    B_T_hs = q.shape
    T, head_size = B_T_hs[-2], B_T_hs[-1]
    wei = attention_scores(q, k)
    if scale:
        wei = scale_scores(wei, head_size)
    if not causal:
        tril = causal_mask(T, device=q.device)
        wei = apply_mask(wei, tril)
    wei = softmax(wei, dim=-1)
    out = mix_values(wei, v)
    return out, wei
