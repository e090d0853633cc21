# source: https://github.com/chijames/GST/issues/1
# exercise: softmax
# accept: mean|average|subtract\w* (the )?max|max(imum)? shift|stab|overflow
# why: shifts by the mean instead of the max: exp overflows for large scores, and a -inf in the row makes the mean -inf (NaN)
# base: correct_head_loop

def softmax(scores, dim=-1):
    centred = scores - scores.mean(dim=dim, keepdim=True)  # for numerical stability
    e = torch.exp(centred)
    return e / torch.sum(e, dim=dim, keepdim=True)
