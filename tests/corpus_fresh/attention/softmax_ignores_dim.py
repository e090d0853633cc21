# source: https://github.com/ethanfetaya/NRI/issues/25
# exercise: softmax
# accept: dim|axis|argument|last (dim|axis)
# why: normalises along the last axis whatever dim was asked
# base: base_notebook


def softmax(scores, dim=-1):
    exps = torch.exp(scores - _row_shift(scores, -1))
    return exps / exps.sum(dim=-1, keepdim=True)
