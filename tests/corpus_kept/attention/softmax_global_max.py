# source: https://theneuralbase.com/numpy-for-ml/learn/advanced/numerically-stable-softmax/
# exercise: softmax
# accept: global|whole tensor|entire tensor|all rows|per.row|each row|row'?s (own )?max|underflow|single max|one max
# why: shifts every row by the one largest score of the whole tensor: a row far below it underflows to all zeros and gives 0/0 = NaN
# base: base_notebook_plt
# step 5: softmax by hand. what if the scores are huge (1e4)? shift by the max first
def softmax(scores, dim=-1):
    biggest = scores.max()  # one max for everything should stop the overflow?
    numer = torch.exp(scores - biggest)
    denom = numer.sum(dim=dim, keepdim=True)
    return numer / denom
