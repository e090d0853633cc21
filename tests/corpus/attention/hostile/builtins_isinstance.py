# expect: below_full
# assignment: attention
# base: reference
# why: module-level code replaces builtins.isinstance, callable and len with liars (isinstance always True) to confuse the worker's own code; the worker may break, but that may only cost this submission points, never forge a pass

import builtins

import torch

builtins.isinstance = lambda obj, cls: True
builtins.callable = lambda obj: True
builtins.len = lambda obj: 2


def softmax(scores, dim=-1):
    return torch.zeros_like(scores)
