# source: classic (no public example found)
# exercise: softmax
# accept: keepdim|broadcast|reduced dim
# why: the sum drops the reduced dim, so the division broadcasts along the wrong axis
# base: correct_chunk_entr

def softmax(scores, dim=-1):
    row_max = scores.amax(dim=dim, keepdim=True)
    # a row that is all -inf would give nan; shift those by zero instead
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    unnorm = torch.exp(scores - row_max.detach())
    return unnorm / unnorm.sum(dim=dim)
