# expect: partial
# assignment: attention
# base: reference
# message: File too large|No space left
# why: attention_entropy writes a 2 GiB file into its scratch folder in 1 MiB chunks; the file size limit must stop it (an error for that function), the grader must not crash

import torch


def attention_entropy(weights):
    chunk = b"\0" * (1 << 20)
    with open("big.bin", "wb") as fh:
        for _ in range(2048):  # 2 GiB at most
            fh.write(chunk)
            fh.flush()
    p = weights
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(-1)
