# expect: full
# assignment: attention
# why: multi_head_attention loops over heads in Python, slicing the weight columns per head, then concatenates

import math
import torch


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    d = C // n_heads
    outs, ws = [], []
    for h in range(n_heads):
        cols = slice(h * d, (h + 1) * d)
        q = x @ w_q[:, cols]
        k = x @ w_k[:, cols]
        v = x @ w_v[:, cols]
        out_h, w_h = attention(q, k, v, causal=causal, scale=True)
        outs.append(out_h)
        ws.append(w_h)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(ws, dim=1)
