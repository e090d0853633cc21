# source: https://github.com/lucidrains/memory-compressed-attention/issues/2
# exercise: apply_mask
# accept: \+ ?inf|positive inf|wrong sign|sign of|-float\('-inf'\)
# why: fills with -float('-inf'), which is +inf, so the masked positions win instead of vanishing
# base: correct_loops

def apply_mask(scores, mask):
    out = scores.clone()
    out = out.masked_fill(mask.logical_not(), -float('-inf'))
    return out
