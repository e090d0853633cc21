# expect: lose
# assignment: attention
# exercise: softmax
# message: torch\.softmax|forbidden|not allowed|by hand
# diagnosis: none (only the source shows it: torch.softmax gives the right values)
# why: softmax just calls torch.softmax, which the assignment forbids (values are right)
# may_fail: softmax::test_softmax_written_by_hand

import torch


def softmax(scores, dim=-1):
    return torch.softmax(scores, dim=dim)
