# expect: zero
# assignment: attention
# base: none
# message: not UTF-8
# why: Latin-1 bytes in a comment and a string; the file is graded with every check failed and a message saying it is not UTF-8 text

import torch

# café crème ÿþ

def softmax(scores, dim=-1):
    return scores  # "é"
