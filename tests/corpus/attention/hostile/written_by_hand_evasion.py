# expect: below_full
# assignment: attention
# base: reference
# message: by hand
# why: softmax fetches torch's own softmax through a string lookup in a module __dict__ (no `softmax` attribute, no getattr); it must not earn the "written by hand" points

import torch.nn.functional as F


def softmax(scores, dim=-1):
    builtin = F.__dict__["soft" + "max"]
    return builtin(scores, dim=dim)
