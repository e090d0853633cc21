# source: https://github.com/jax-ml/jax/pull/25984
# exercise: softmax
# accept: exp2|base.?2|2 ?\*\*|2\^|power(s)? of (2|two)|log2|ln ?2|log\(2\)|instead of e\b|not e\b|temperature
# why: uses torch.exp2 (2**x, as fast kernels do) without multiplying the scores by log2(e) first, so the weights are a softmax at the wrong temperature
# base: base_terse

def softmax(scores, dim=-1):
    m = scores.amax(dim, keepdim=True).detach().nan_to_num(neginf=0.0)
    e = (scores - m).exp2()
    return e / e.sum(dim, keepdim=True)
