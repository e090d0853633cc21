# source: https://github.com/RashikShahjahan/micrograd-extented/blob/HEAD/micrograd/layers/softmax.py
# exercise: softmax
# accept: max|stab|overflow|large scores|exp\(1e4\)
# why: exp of the raw scores with no max subtracted: exp(1e4) overflows to inf and the weights become NaN
# base: correct_einsum

def softmax(scores, dim=-1):
    exps = scores.exp()
    return exps / exps.sum(dim=dim, keepdim=True)
