# source: https://github.com/thegregyang/NTK4A/issues/3
# exercise: scale_scores
# accept: by (d|head_size)\b|1 ?/ ?d\b|not (its|the) (square )?root|instead of (its |the )?(sqrt|square root)|without (the )?(sqrt|square root)|head_size itself
# why: divides by head_size itself (the 1/d scaling) instead of by its square root

import math

import torch


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-2, -1)


def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    return scores * (1.0 / head_size)


def causal_mask(T: int, device=None) -> torch.Tensor:
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
    return ~future


def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return scores.masked_fill(~mask, float("-inf"))


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    lse = torch.logsumexp(scores, dim=dim, keepdim=True)
    return torch.exp(scores - lse)


def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return weights @ v


def attention(q, k, v, causal=True, scale=True):
    att = attention_scores(q, k)
    if scale:
        att = scale_scores(att, q.size(-1))
    if causal:
        T = q.size(-2)
        att = apply_mask(att, causal_mask(T, q.device))
    att = softmax(att, dim=-1)
    y = mix_values(att, v)
    return y, att


def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    T = v.shape[-2]
    tril = torch.tril(torch.ones(T, T, device=v.device))
    wei = torch.zeros(T, T, device=v.device, dtype=v.dtype)
    wei = wei.masked_fill(tril == 0, float("-inf"))
    wei = softmax(wei, dim=-1)
    return wei @ v


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    C = x.size(-1)
    if C % n_heads != 0:
        raise ValueError("d_model must be divisible by n_heads")
    return x.unflatten(-1, (n_heads, C // n_heads)).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(1, 2).flatten(2)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    y, att = attention(q, k, v, causal=causal)
    y = merge_heads(y) @ w_o
    return y, att


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    plogp = weights * torch.log(weights.clamp_min(1e-30))
    plogp = torch.where(weights > 0, plogp, torch.zeros_like(plogp))
    return -plogp.sum(-1)
