# expect: partial
# assignment: attention
# base: reference
# message: PermissionError|not permitted
# why: attention_entropy sends SIGKILL to its parent (the worker server), to the parent's process group and to its own group; every signal must be refused (an error for that function), and grading of the other functions must go on unaffected

import os
import signal

import torch


def attention_entropy(weights):
    parent = os.getppid()
    errors = []
    for attempt in (
        lambda: os.kill(parent, signal.SIGKILL) if parent > 1 else None,
        lambda: os.killpg(os.getpgid(parent), signal.SIGKILL) if parent > 1 else None,
        lambda: os.kill(0, signal.SIGTERM),
    ):
        try:
            attempt()
        except (OSError, ValueError) as exc:
            errors.append(exc)
    if errors:
        raise errors[0]
    p = weights
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(-1)
