# source: public code (code-search hit; the index does not name the repository): "maxes = torch.amax(x, (1,2), keepdim=True) ... torch.sum(x_exp, (1,2), keepdim=True)"
# exercise: softmax
# accept: whole|all (entries|elements|positions)|matrix|two dims|last two|every (entry|element)|global|sum over all
# why: normalises over the whole (T, S) matrix (last two dims) instead of along dim
# base: correct_additive_mask

def softmax(scores, dim=-1):
    z = scores - torch.amax(scores, dim=(-2, -1), keepdim=True)
    num = z.exp()
    return num / num.sum(dim=(-2, -1), keepdim=True)
