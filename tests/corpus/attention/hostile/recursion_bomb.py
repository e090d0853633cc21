# expect: partial
# assignment: attention
# base: reference
# message: RecursionError|maximum recursion|SIGSEGV
# why: attention_entropy recurses without end (RecursionError), bag_of_past lifts the recursion limit and overflows the C stack (SIGSEGV); both become errors for their own checks, and the judge is unharmed

import gc
import sys

import torch


def attention_entropy(weights):
    return attention_entropy(weights * 1.0)


def bag_of_past(v):
    sys.setrecursionlimit(10**6)
    gc.disable()  # building the lists fast; the process dies anyway
    a, b = [], []
    for _ in range(200_000):
        a, b = [a], [b]
    a == b  # C-level recursion (list comparison) past the real stack
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)
    return v.cumsum(dim=-2) / counts.unsqueeze(-1)
