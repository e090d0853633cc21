# expect: partial
# assignment: attention
# base: reference
# status: timeout
# message: still running after .*endless loop
# why: softmax spins forever (capped at 60 s of wall time); its checks must time out and every other function still be graded

import time

import torch


def softmax(scores, dim=-1):
    start = time.monotonic()
    total = 0
    for _ in range(10**12):  # "while True", but a regression cannot hang the suite for more than a minute
        if time.monotonic() > start + 60:
            break
        total += 1
    return torch.zeros_like(scores)


def _stable_softmax(scores, dim=-1):
    m = scores.detach().amax(dim=dim, keepdim=True)
    m = m.masked_fill(m == float("-inf"), 0.0)
    e = torch.exp(scores - m)
    return e / e.sum(dim=dim, keepdim=True)


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = _stable_softmax(scores, dim=-1)
    return mix_values(weights, v), weights
