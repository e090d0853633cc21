# source: https://github.com/pytorch/pytorch/issues/59800
# exercise: scale_scores
# accept: gradient|\bgrad|autograd|torch\.tensor|detach|copy|differentiab|graph
# why: wraps the result in torch.tensor(...), which copies it without its history: the numbers are right but no gradient flows back to the scores
# base: base_shapes
def scale_scores(scores, head_size):
    # (..., T, S) -> (..., T, S), divided by sqrt(d_head)
    assert head_size > 0
    factor = math.sqrt(head_size)
    return torch.tensor(scores / factor)   # make sure a tensor comes back
