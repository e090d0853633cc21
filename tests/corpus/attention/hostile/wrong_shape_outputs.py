# expect: below_full
# assignment: attention
# base: reference
# message: shape
# why: softmax returns a 0-dim tensor and attention_entropy a 1-D one (wrong shapes, right type); every check must fail with a message about the shape, never crash with an internal check error

import torch


def softmax(scores, dim=-1):
    return scores.exp().sum() / scores.exp().sum()


def attention_entropy(weights):
    return torch.zeros(weights.shape[-1], dtype=weights.dtype)
