# expect: below_full
# assignment: attention
# base: reference
# message: differs from the expected result|sums to|must be|expected
# why: module-level code makes torch.allclose/equal/isclose/testing.assert_close, Tensor.__eq__ and builtins.all always succeed, then softmax and attention_entropy return garbage; the judge compares in its own process, so no credit for them

import builtins

import torch
import torch.testing

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *r, **k: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
torch.isfinite = lambda x: torch.ones_like(x, dtype=torch.bool)
torch.isnan = lambda x: torch.zeros_like(x, dtype=torch.bool)
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
builtins.all = lambda *a: True
builtins.any = lambda *a: False


def softmax(scores, dim=-1):
    return torch.full_like(scores, 0.5)


def attention_entropy(weights):
    return torch.full_like(weights[..., 0], 42.0)
