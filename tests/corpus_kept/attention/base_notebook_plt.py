# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission exported from a notebook: cell markers, question comments, a pyplot import and a plotting helper that is never called
#!/usr/bin/env python
# coding: utf-8

# # Attention from scratch: my notebook
#
# Lab 4. Cells run top to bottom.

# In[1]:


import math

import torch
import matplotlib.pyplot as plt


# In[2]:


# step 2: how much does each query like each key?
def attention_scores(q, k):
    # swap only the last two dims of k, so batches and heads stay where they are?
    kt = k.transpose(-2, -1)
    return q @ kt


# In[3]:


# step 3: why sqrt? the dot product of d unit-variance numbers has std sqrt(d)
def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


# In[4]:


# step 4: who may look at whom?
def causal_mask(T, device=None):
    everything = torch.ones((T, T), dtype=torch.bool, device=device)
    return torch.tril(everything)  # diagonal kept: a token sees itself


def apply_mask(scores, mask):
    # masked_fill (no underscore) gives back a new tensor, the caller's scores stay as they were?
    return scores.masked_fill(mask.logical_not(), float("-inf"))


# In[5]:


# step 5: softmax by hand. what if the scores are huge (1e4)? shift by the row max first
def softmax(scores, dim=-1):
    biggest = torch.amax(scores, dim=dim, keepdim=True).detach()
    # a row that is all -inf would give -inf - -inf = nan, so shift such a row by 0 instead
    biggest = torch.where(torch.isinf(biggest), torch.zeros_like(biggest), biggest)
    numer = torch.exp(scores - biggest)
    denom = numer.sum(dim=dim, keepdim=True)
    return numer / denom


# In[6]:


# step 6: what comes out? a weighted average of the values
def mix_values(weights, v):
    return weights @ v


def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, q.size(-1))
    if causal:
        T = q.size(-2)
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    return mix_values(w, v), w


# In[7]:


# step 7: the boring baseline, every past token counts the same
def bag_of_past(v):
    T = v.shape[-2]
    zeros = torch.zeros(T, T, dtype=v.dtype, device=v.device)
    w = softmax(apply_mask(zeros, causal_mask(T, device=v.device)), dim=-1)
    return w @ v


# In[8]:


# step 8: heads
def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"can't split {C} channels into {n_heads} heads")
    hs = C // n_heads
    return x.reshape(B, T, n_heads, hs).transpose(1, 2)


def merge_heads(x):
    B, H, T, hs = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, H * hs)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, wei = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, wei


# In[9]:


# step 9: how spread out is each row? 0 log 0 counts as 0
def attention_entropy(weights):
    p = weights
    safe = torch.where(p > 0, p, torch.ones_like(p))  # log(1) = 0 where p is 0
    return -(p * torch.log(safe)).sum(dim=-1)


# In[10]:


def show_heatmap(w, title="weights"):
    # row = the token that looks, column = the token looked at
    plt.imshow(w.detach().cpu(), cmap="viridis")
    plt.title(title)
    plt.colorbar()
    plt.show()
