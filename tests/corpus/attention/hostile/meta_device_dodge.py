# expect: below_full
# assignment: attention
# base: reference
# why: attention and bag_of_past build tensors on the CPU (they would break on a GPU) and raise a RuntimeError whenever inputs are not on the CPU, to turn the device check into "inconclusive, not counted"; dodging a check must not give full marks

import torch


def _refuse_other_devices(*tensors):
    if any(t.device.type != "cpu" for t in tensors):
        raise RuntimeError("this function only runs on the CPU for now")


def attention(q, k, v, causal=True, scale=True):
    _refuse_other_devices(q, k, v)
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2]))  # mask built on the CPU
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights


def bag_of_past(v):
    _refuse_other_devices(v)
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, dtype=v.dtype)  # on the CPU
    return v.cumsum(dim=-2) / counts.unsqueeze(-1)
