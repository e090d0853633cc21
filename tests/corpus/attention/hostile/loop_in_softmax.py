# expect: partial
# assignment: attention
# base: reference
# status: timeout
# message: still running after .*endless loop
# why: softmax spins forever (capped at 60 s of wall time); its checks must time out and every other function still be graded
# replace: weights = softmax(scores, dim=-1) ==> weights = _reference_softmax(scores, dim=-1)

import time

import torch

_reference_softmax = softmax  # noqa: F821 - attention keeps a working softmax; only `softmax` itself hangs


def softmax(scores, dim=-1):
    start = time.monotonic()
    total = 0
    for _ in range(10**12):  # "while True", but a regression cannot hang the suite for more than a minute
        if time.monotonic() > start + 60:
            break
        total += 1
    return torch.zeros_like(scores)
