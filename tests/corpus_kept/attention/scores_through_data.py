# source: https://github.com/pytorch/pytorch/issues/33629
# exercise: attention_scores
# accept: gradient|\bgrad|autograd|\.data|detach|differentiab|backprop|graph
# why: takes q.data and k.data, so the scores are cut off from autograd: the values are right but no gradient reaches q or k
# base: base_shapes
def attention_scores(q, k):
    # q: (..., T, d)   k: (..., S, d)   ->   (..., T, S)
    assert q.shape[-1] == k.shape[-1], "q and k need the same d"
    # use .data so the big T x S table does not hold on to the graph
    k_t = k.data.transpose(-2, -1)     # (..., d, S)
    scores = torch.matmul(q.data, k_t)  # (..., T, S)
    assert scores.shape[-2:] == (q.shape[-2], k.shape[-2])
    return scores
