# source: https://github.com/flatironinstitute/deepblast/issues/93
# exercise: softmax
# accept: namedtuple|tuple|\.values|indices|return_types|TypeError|unsupported operand
# why: scores.max(dim=...) returns a (values, indices) pair; subtracting that pair from the scores raises a TypeError
# base: base_shapes
def softmax(scores, dim=-1):
    # any shape; normalise along dim
    row_max = scores.max(dim=dim, keepdim=True)               # biggest score per row
    shifted = scores - row_max                                 # all <= 0
    exps = torch.exp(shifted)
    total = exps.sum(dim=dim, keepdim=True)
    probs = exps / total
    assert probs.shape == scores.shape
    return probs
