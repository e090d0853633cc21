# source: https://github.com/dvgodoy/PyTorchStepByStep/issues/23
# exercise: attention
# accept: gradient|\bgrad|detach|autograd|differentiab|graph
# why: returns weights.detach() so they can be plotted: the numbers are right but no gradient flows through the returned weights
# base: base_notebook_plt
def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, q.size(-1))
    if causal:
        T = q.size(-2)
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    return mix_values(w, v), w.detach()  # detached copy for the heatmaps
