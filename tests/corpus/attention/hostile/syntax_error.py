# expect: zero
# assignment: attention
# base: none
# message: syntax error at line 10, column \d+
# why: a syntax error; the file is graded with every check failed and a message naming line and column, no crash

import torch


def softmax(scores, dim=-1)
    m = scores.amax(dim=dim, keepdim=True)
    return (scores - m).exp()
