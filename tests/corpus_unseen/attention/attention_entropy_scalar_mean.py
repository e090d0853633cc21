# source: https://github.com/joshyZhou/AST/issues/17
# exercise: attention_entropy
# accept: scalar|mean|average|shape|per[- ]row|reduc|one (number|value)
# why: averages the per-row entropies into one scalar (.sum(-1).mean(), as in the paper code) instead of returning shape (..., T)
# base: correct_loops

def attention_entropy(weights):
    p = weights
    log_p = p.masked_fill(p == 0, 1.0).log()   # log(1) = 0 where p == 0
    return -(p * log_p).sum(dim=-1).mean()
