# expect: placeholder
# assignment: attention
# why: every function hands back its input (a copy where the shape allows, else zeros of the right shape): computes nothing

import torch


def _back(x, shape):
    if tuple(x.shape) == tuple(shape):
        return x.clone()
    return torch.zeros(shape, dtype=x.dtype, device=x.device)


def attention_scores(q, k):
    return _back(q, (*q.shape[:-1], k.shape[-2]))


def scale_scores(scores, head_size):
    return scores.clone()


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device)


def apply_mask(scores, mask):
    return scores.clone()


def softmax(scores, dim=-1):
    return scores.clone()


def mix_values(weights, v):
    return _back(v, (*weights.shape[:-1], v.shape[-1]))


def attention(q, k, v, causal=True, scale=True):
    return _back(v, (*q.shape[:-1], v.shape[-1])), _back(q, (*q.shape[:-1], k.shape[-2]))


def bag_of_past(v):
    return v.clone()


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads:
        raise ValueError("C must be divisible by n_heads")
    B, T, C = x.shape
    return _back(x, (B, n_heads, T, C // n_heads))


def merge_heads(x):
    B, H, T, D = x.shape
    return _back(x, (B, T, H * D))


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    return x.clone(), _back(x, (B, n_heads, T, T))


def attention_entropy(weights):
    return _back(weights, weights.shape[:-1])
