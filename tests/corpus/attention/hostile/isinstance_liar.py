# expect: below_full
# assignment: attention
# base: reference
# why: split_heads returns an object whose __class__ claims to be torch.Tensor (so isinstance() says yes) and whose detach() returns itself; the worker must not turn it into a passing tensor

import torch


class FakeTensor:
    @property
    def __class__(self):
        return torch.Tensor

    shape = (2, 3, 5, 4)
    dtype = torch.float32
    device = torch.device("cpu")

    def detach(self):
        return self

    def __eq__(self, other):
        return True


def split_heads(x, n_heads):
    return FakeTensor()
