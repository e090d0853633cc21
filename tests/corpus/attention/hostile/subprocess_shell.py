# expect: partial
# assignment: attention
# base: reference
# message: PermissionError|not permitted
# absent_file: /tmp/grader-hostile-subprocess-marker
# why: attention_entropy runs subprocess.run(['sh', '-c', ...]) to leave a file in /tmp; starting a program must be refused (an error for that function only) and no file may appear

import os
import subprocess

import torch


def attention_entropy(weights):
    os.system("touch /tmp/grader-hostile-subprocess-marker")  # fails quietly (returns -1) when fork is refused
    subprocess.run(["sh", "-c", "echo pwned > /tmp/grader-hostile-subprocess-marker; sleep 20"], timeout=30)
    p = weights
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(-1)
