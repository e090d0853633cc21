# expect: partial
# assignment: attention
# base: reference
# message: memory limit \d+ MiB exceeded
# why: one function tries to lift RLIMIT_AS and allocates an 8 GiB tensor, another grows a list of 1 GiB buffers towards 8 GiB; both must fail with the memory limit, the rest graded

import resource

import torch


def attention_entropy(weights):
    try:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (OSError, ValueError):
        pass
    big = torch.empty(2**31, dtype=torch.float32)  # 8 GiB in one allocation
    big.fill_(1.0)
    p = weights
    return -(p * torch.log(p.clamp_min(1e-38))).sum(-1) + big[0] * 0


def bag_of_past(v):
    chunks = []
    for _ in range(8):  # 8 x 1 GiB = 8 GiB at most, untouched so it costs no time
        chunks.append(torch.empty(2**28, dtype=torch.float32))
    chunks.append(bytearray(2**30))  # and the Python way, if the tensors got through
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)
    return v.cumsum(dim=-2) / counts.unsqueeze(-1)
