# expect: zero
# assignment: attention
# base: none
# message: could not be loaded.*(ModuleNotFoundError|ImportError)
# why: the file imports the course's reference (solutions.attention) and delegates every function to it; the import must fail, so the file does not load and earns nothing

import solutions.attention as _ref


def attention_scores(q, k):
    return _ref.attention_scores(q, k)


def scale_scores(scores, head_size):
    return _ref.scale_scores(scores, head_size)


def causal_mask(T, device=None):
    return _ref.causal_mask(T, device)


def apply_mask(scores, mask):
    return _ref.apply_mask(scores, mask)


def softmax(scores, dim=-1):
    return _ref.softmax(scores, dim)


def mix_values(weights, v):
    return _ref.mix_values(weights, v)


def attention(q, k, v, causal=True, scale=True):
    return _ref.attention(q, k, v, causal, scale)


def bag_of_past(v):
    return _ref.bag_of_past(v)


def split_heads(x, n_heads):
    return _ref.split_heads(x, n_heads)


def merge_heads(x):
    return _ref.merge_heads(x)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    return _ref.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal)


def attention_entropy(weights):
    return _ref.attention_entropy(weights)
