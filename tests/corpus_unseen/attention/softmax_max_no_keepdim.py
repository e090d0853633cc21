# source: https://github.com/DeNA/HandyRL/pull/209
# exercise: softmax
# accept: keepdim|broadcast|reduced dim
# why: the max is taken without keepdim, so it broadcasts along the wrong axis (a per-column shift, or a shape error)
# base: correct_dot_product_loops

def softmax(scores, dim=-1):
    biggest = scores.max(dim=dim).values
    e = (scores - biggest).exp()
    total = e.sum(dim=dim, keepdim=True)
    return e / total
