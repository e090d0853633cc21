# expect: placeholder
# assignment: attention
# why: every function returns random values of the right shape, dtype and device: computes nothing

import torch


def attention_scores(q, k):
    return fill(q, (*q.shape[:-1], k.shape[-2]))


def scale_scores(scores, head_size):
    return fill(scores, scores.shape)


def causal_mask(T, device=None):
    return fill(torch.empty(0, device=device), (T, T)).bool()


def apply_mask(scores, mask):
    return fill(scores, scores.shape)


def softmax(scores, dim=-1):
    return fill(scores, scores.shape)


def mix_values(weights, v):
    return fill(v, (*weights.shape[:-1], v.shape[-1]))


def attention(q, k, v, causal=True, scale=True):
    return fill(v, (*q.shape[:-1], v.shape[-1])), fill(q, (*q.shape[:-1], k.shape[-2]))


def bag_of_past(v):
    return fill(v, v.shape)


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads:
        raise ValueError("C must be divisible by n_heads")
    B, T, C = x.shape
    return fill(x, (B, n_heads, T, C // n_heads))


def merge_heads(x):
    B, H, T, D = x.shape
    return fill(x, (B, T, H * D))


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    return fill(x, x.shape), fill(x, (B, n_heads, T, T))


def attention_entropy(weights):
    return fill(weights, weights.shape[:-1])


def fill(like, shape):
    return torch.rand(shape, dtype=like.dtype, device=like.device)
