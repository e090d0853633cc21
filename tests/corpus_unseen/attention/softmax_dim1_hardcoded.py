# source: https://github.com/FudanNLP/fastNLP/issues/254
# exercise: softmax
# accept: dim ?=? ?1|hard[- ]?cod|ignor|wrong (dim|dimension|axis)|dim argument|fixed (dim|axis)
# why: uses dim=1 for the max and the sum whatever dim says: right for a 2-D input only
# base: correct_tril_matmul

def softmax(scores, dim=-1):
    m = scores.max(dim=1, keepdim=True).values
    e = torch.exp(scores - m)
    return e / e.sum(dim=1, keepdim=True)
