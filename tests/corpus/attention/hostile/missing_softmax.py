# expect: below_full
# assignment: attention
# base: reference
# message: `softmax` is not defined
# failing_only: softmax
# why: a solution that never defines softmax (attention normalises inline); only softmax's checks fail, each saying "`softmax` is not defined", every other function earns full marks

import torch


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    e = (scores - scores.amax(-1, keepdim=True).detach()).exp()
    weights = e / e.sum(-1, keepdim=True)
    return mix_values(weights, v), weights


del softmax  # noqa: F821 - the point of this case: the name is gone
