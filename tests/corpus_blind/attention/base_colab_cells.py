# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission exported from Colab: "# %%" cells, question comments, demo print lines and a pyplot import

# %% [markdown]
# # Week 5 lab: attention from scratch
# Run every cell top to bottom before you export.

# %%
import math

import matplotlib.pyplot as plt
import torch

torch.manual_seed(0)

# %%
# Step 2: every query against every key -- which dims do we swap?
def attention_scores(q, k):
    kt = k.transpose(-2, -1)  # swap only the last two (k.T would flip the batch too)
    return torch.matmul(q, kt)


# %%
# Step 3: why divide by sqrt(d) and not by d?
def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


print("scaled 4x4 scores, std:", scale_scores(torch.randn(4, 4) * 4, 16).std().item())


# %%
# Step 4: lower triangle = allowed; does the diagonal count?  (yes, a token sees itself)
def causal_mask(T, device=None):
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols <= rows


print(causal_mask(4))


# %%
# masked scores become -inf, so exp() gives exactly zero -- but never in place!
def apply_mask(scores, mask):
    blocked = torch.logical_not(mask)
    return scores.masked_fill(blocked, -math.inf)


# %%
# Step 5: softmax by hand -- why subtract the max?  (exp(1e4) is inf)
def softmax(scores, dim=-1):
    biggest = scores.amax(dim=dim, keepdim=True).detach()
    biggest = torch.where(torch.isinf(biggest), torch.zeros_like(biggest), biggest)
    ex = torch.exp(scores - biggest)
    total = ex.sum(dim=dim, keepdim=True)
    return ex / total


print(softmax(torch.tensor([1.0, 2.0, 3.0])))


# %%
# Step 6: weighted average of the values
def mix_values(weights, v):
    return torch.matmul(weights, v)


# %%
def attention(q, k, v, causal=True, scale=True):
    d = q.size(-1)
    T = q.size(-2)
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, d)
    if causal:
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    out = mix_values(w, v)
    return out, w


# %%
# the fluffy / blue / cat example from the chapter -- do we get 0.446, 0.446, 0.108?
q_demo = torch.tensor([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
k_demo = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
v_demo = torch.tensor([[3.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
out_demo, w_demo = attention(q_demo, k_demo, v_demo)
print(w_demo)
print(out_demo)


# %%
# Step 7: the bag of the past -- row t is the average of rows 0..t
def bag_of_past(v):
    T = v.size(-2)
    running = torch.cumsum(v, dim=-2)
    how_many = torch.arange(1, T + 1, dtype=v.dtype, device=v.device).view(T, 1)
    return running / how_many


print(bag_of_past(torch.arange(6.0).view(3, 2)))


# %%
# Step 8: heads -- (B, T, C) -> (B, T, H, d) -> (B, H, T, d)
def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"C={C} is not divisible by n_heads={n_heads}")
    return x.reshape(B, T, n_heads, C // n_heads).transpose(1, 2)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, H * d)


# %%
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, weights = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, weights


x_demo = torch.randn(2, 5, 8)
w_demo_list = [torch.randn(8, 8) for _ in range(4)]
out_mha, w_mha = multi_head_attention(x_demo, *w_demo_list, n_heads=2)
print(out_mha.shape, w_mha.shape)


# %%
# Step 9: entropy in nats -- what happens at p = 0?  (0 * log 0 should count as 0)
def attention_entropy(weights):
    p = weights
    smallest = torch.finfo(p.dtype).tiny  # log(0) = -inf, so never take the log of an exact 0
    return -(p * torch.log(p.clamp(min=smallest))).sum(dim=-1)


print(attention_entropy(w_demo))


# %%
def show_heatmap(w):
    plt.imshow(w.detach().cpu(), cmap="viridis")
    plt.xlabel("key position")
    plt.ylabel("query position")
    plt.colorbar()
    plt.show()
