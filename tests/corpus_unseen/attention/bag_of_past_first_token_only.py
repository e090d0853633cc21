# source: public code (code-search hit; the index does not name the repository): "xprev = x[b,:+1]"
# exercise: bag_of_past
# accept: first|:\+1|:1\b|typo|t ?\+ ?1|constant|same (row|value)|only (the )?first
# why: typo :+1 for :t+1, so every row is the mean of the first token alone

# Homework: attention from scratch
# I wrote most of these with loops first and then vectorised the ones I could.
import math
import torch


def attention_scores(q, k):
    k_t = k.transpose(-1, -2)
    scores = torch.matmul(q, k_t)
    return scores


def scale_scores(scores, head_size):
    return scores / (head_size ** 0.5)


def causal_mask(T, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def apply_mask(scores, mask):
    out = scores.clone()
    out = out.masked_fill(mask.logical_not(), -math.inf)
    return out


def softmax(scores, dim=-1):
    x_max = torch.max(scores, dim=dim, keepdim=True)[0]
    numer = torch.exp(scores - x_max)
    denom = torch.sum(numer, dim=dim, keepdim=True)
    return numer / denom


def mix_values(weights, v):
    return torch.matmul(weights, v)


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        head_size = k.shape[-1]
        scores = scale_scores(scores, head_size)
    if causal:
        T = scores.shape[-1]
        scores = apply_mask(scores, causal_mask(T, device=scores.device))
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights


def bag_of_past(v):
    T = v.shape[-2]
    rows = []
    for t in range(T):
        rows.append(v[..., :+1, :].mean(dim=-2))
    return torch.stack(rows, dim=-2)


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C is not divisible by n_heads")
    head_dim = C // n_heads
    heads = []
    for h in range(n_heads):
        heads.append(x[:, :, h * head_dim:(h + 1) * head_dim])
    return torch.stack(heads, dim=1)


def merge_heads(x):
    n_heads = x.shape[1]
    return torch.cat([x[:, h] for h in range(n_heads)], dim=-1)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    queries = split_heads(torch.matmul(x, w_q), n_heads)
    keys = split_heads(torch.matmul(x, w_k), n_heads)
    values = split_heads(torch.matmul(x, w_v), n_heads)
    out, weights = attention(queries, keys, values, causal=causal)
    out = merge_heads(out)
    out = torch.matmul(out, w_o)
    return out, weights


def attention_entropy(weights):
    p = weights
    log_p = p.masked_fill(p == 0, 1.0).log()   # log(1) = 0 where p == 0
    return -(p * log_p).sum(dim=-1)
