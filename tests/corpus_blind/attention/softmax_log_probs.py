# source: https://github.com/google/tunix/issues/1386
# exercise: softmax
# accept: \blog\b|log-?prob|log.?softmax|logarithm|negative
# why: returns the log-softmax (x - max - log sum exp): log-probabilities, negative, -inf at masked positions, instead of the probabilities
# base: base_terse

def softmax(scores, dim=-1):
    m = scores.amax(dim, keepdim=True).detach().nan_to_num(neginf=0.0)
    z = scores - m
    return z - z.exp().sum(dim, keepdim=True).log()
