# source: https://github.com/pytorch/pytorch/pull/178684
# exercise: attention
# accept: device|cpu|cuda|gpu
# why: builds the causal mask without passing q's device, so it is always on the CPU and CUDA inputs fail
# base: base_notebook_plt
def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, q.size(-1))
    if causal:
        T = q.size(-2)
        s = apply_mask(s, causal_mask(T))
    w = softmax(s, dim=-1)
    return mix_values(w, v), w
