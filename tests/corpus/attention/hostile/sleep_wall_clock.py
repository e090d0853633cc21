# expect: partial
# assignment: attention
# base: reference
# status: timeout
# message: wall time
# why: causal_mask(6) sleeps (no CPU used, capped at 60 s); the wall-clock backstop must end that call as a timeout, the rest graded

import time

import torch


def causal_mask(T, device=None):
    if T == 6:
        time.sleep(60)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
