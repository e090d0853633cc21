# source: classic (no public example found)
# exercise: attention
# accept: invert|revers|opposite|not causal|causal ?= ?false|flag
# why: the condition is inverted: the mask is applied when causal=False and skipped when causal=True

# Attention -- following along with the "let's build GPT" video
import torch


def attention_scores(q, k):
    wei = q @ k.transpose(-2, -1)  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
    return wei


def scale_scores(scores, head_size):
    return scores * head_size**-0.5


def causal_mask(T, device=None):
    return torch.tril(torch.ones((T, T), dtype=torch.bool, device=device))


def apply_mask(scores, mask):
    return scores.masked_fill(mask.logical_not(), float('-inf'))


def softmax(scores, dim=-1):
    maxes = torch.amax(scores, dim=dim, keepdim=True)
    e = torch.exp(scores - maxes)
    return e / torch.sum(e, dim=dim, keepdim=True)


def mix_values(weights, v):
    out = weights @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)
    return out


def attention(q, k, v, causal=True, scale=True):
    B_T_hs = q.shape
    T, head_size = B_T_hs[-2], B_T_hs[-1]
    wei = attention_scores(q, k)
    if scale:
        wei = scale_scores(wei, head_size)
    if not causal:
        tril = causal_mask(T, device=q.device)
        wei = apply_mask(wei, tril)
    wei = softmax(wei, dim=-1)
    out = mix_values(wei, v)
    return out, wei


def bag_of_past(v):
    T = v.shape[-2]
    xbow = torch.zeros_like(v)
    outs = []
    for t in range(T):
        xprev = v[..., :t + 1, :]  # (..., t+1, C)
        outs.append(torch.mean(xprev, dim=-2))
    xbow = torch.stack(outs, dim=-2)
    return xbow


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"n_embd={C} is not a multiple of n_head={n_heads}")
    head_size = C // n_heads
    return x.view(B, T, n_heads, head_size).transpose(1, 2)  # (B, nh, T, hs)


def merge_heads(x):
    B, nh, T, hs = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hs)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    heads = []
    weights = []
    for h in range(n_heads):
        out_h, wei_h = attention(q[:, h], k[:, h], v[:, h], causal=causal)
        heads.append(out_h)
        weights.append(wei_h)
    out = merge_heads(torch.stack(heads, dim=1))
    return out @ w_o, torch.stack(weights, dim=1)


def attention_entropy(weights):
    logs = torch.log(weights.masked_fill(weights == 0, 1.0))
    return -torch.sum(weights * logs, dim=-1)
