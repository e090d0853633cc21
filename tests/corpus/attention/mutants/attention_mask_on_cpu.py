# expect: lose
# assignment: attention
# exercise: attention
# message: device
# diagnosis: attention_mask_on_cpu
# why: attention builds its mask with torch.ones(T, T) and no device, so it fails for inputs not on the CPU
# may_fail: attention::test_stays_on*, attention::test_cuda_matches_cpu*, callers::test_stays_on*
# may_fail: callers::test_cuda_matches_cpu*

import torch


def attention(q, k, v, causal=True, scale=True):
    T = q.shape[-2]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        mask = torch.tril(torch.ones(T, T)).bool()
        scores = apply_mask(scores, mask)
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
