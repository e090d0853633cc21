# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission in a terse one-liner style: @ and .mT everywhere, unflatten/flatten for the heads

import math

import torch


def attention_scores(q, k):
    return q @ k.mT


def scale_scores(scores, head_size):
    return scores * head_size ** -0.5


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def apply_mask(scores, mask):
    return torch.where(mask, scores, float("-inf"))


def softmax(scores, dim=-1):
    m = scores.amax(dim, keepdim=True).detach().nan_to_num(neginf=0.0)
    e = (scores - m).exp()
    return e / e.sum(dim, keepdim=True)


def mix_values(weights, v):
    return weights @ v


def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    s = scale_scores(s, q.shape[-1]) if scale else s
    s = apply_mask(s, causal_mask(q.shape[-2], q.device)) if causal else s
    w = softmax(s)
    return mix_values(w, v), w


def bag_of_past(v):
    return v.cumsum(-2) / torch.arange(1, v.shape[-2] + 1, dtype=v.dtype, device=v.device)[:, None]


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads:
        raise ValueError("channels must split evenly across heads")
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)


def merge_heads(x):
    return x.transpose(1, 2).flatten(2)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    out, w = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, w


def attention_entropy(weights):
    return -(weights * weights.clamp_min(torch.finfo(weights.dtype).tiny).log()).sum(-1)
