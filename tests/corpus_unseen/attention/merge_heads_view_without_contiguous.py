# source: https://github.com/facebookresearch/fairseq/issues/2598
# exercise: merge_heads
# accept: contiguous|view|stride|reshape
# why: .view on the permuted (non-contiguous) tensor raises "view size is not compatible with input tensor's size and stride"

# CS lab 7 -- attention
import math
import torch


def attention_scores(q, k):
    return torch.matmul(q, torch.swapaxes(k, -1, -2))


def scale_scores(scores, head_size):
    return scores / head_size ** 0.5


def causal_mask(T, device=None):
    return torch.ones(T, T, device=device).tril().to(torch.bool)


def apply_mask(scores, mask):
    # additive mask: 0 where allowed, -inf where not
    bias = torch.zeros_like(scores).masked_fill(~mask, float('-inf'))
    return scores + bias


def softmax(scores, dim=-1):
    z = scores - scores.max(dim, keepdim=True).values.detach()
    num = z.exp()
    return num / num.sum(dim, keepdim=True)


def mix_values(weights, v):
    # (..., T, S, 1) * (..., 1, S, d) summed over S
    return (weights.unsqueeze(-1) * v.unsqueeze(-3)).sum(dim=-2)


def attention(q, k, v, causal=True, scale=True):
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    p = softmax(scores, dim=-1)
    return mix_values(p, v), p


def bag_of_past(v):
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device).to(v.dtype).unsqueeze(-1)
    return v.cumsum(-2) / counts


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("channels not divisible by heads")
    return x.reshape(B, T, n_heads, -1).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, hd = x.shape
    return x.permute(0, 2, 1, 3).view(B, T, H * hd)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    q = split_heads(torch.matmul(x, w_q), n_heads)
    k = split_heads(torch.matmul(x, w_k), n_heads)
    v = split_heads(torch.matmul(x, w_v), n_heads)
    o, p = attention(q, k, v, causal=causal)
    o = merge_heads(o)
    return torch.matmul(o, w_o), p


def attention_entropy(weights):
    p = weights
    logp = torch.log(torch.where(p == 0, torch.ones_like(p), p))
    return (-p * logp).sum(-1)
