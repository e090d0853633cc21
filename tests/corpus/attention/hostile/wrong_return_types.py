# expect: below_full
# assignment: attention
# base: reference
# message: expected a torch\.Tensor
# why: functions return an object whose __eq__ is always True, a list, a numpy array, None and a string; each must fail with "expected a torch.Tensor", never pass by equality tricks

import torch


class AlwaysEqual:
    shape = (2, 3, 5, 7)
    dtype = torch.float32

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __float__(self):
        return 1.0

    def __repr__(self):
        return "tensor([[1.]])"


def scale_scores(scores, head_size):
    return AlwaysEqual()


def bag_of_past(v):
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, dtype=v.dtype)
    return (v.cumsum(dim=-2) / counts.unsqueeze(-1)).tolist()


def mix_values(weights, v):
    return (weights.double() @ v.double()).numpy()


def attention_entropy(weights):
    return None


def causal_mask(T, device=None):
    return "tensor([[True]])"
