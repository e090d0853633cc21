# source: https://github.com/numenta/nupic-legacy/pull/3818
# exercise: softmax
# accept: max|overflow|stab|nan|inf|shift
# why: exponentiates without subtracting the row max: exp(1e4) overflows
# base: base_loops


def softmax(scores, dim=-1):
    e = torch.exp(scores)
    return e / e.sum(dim=dim, keepdim=True)
