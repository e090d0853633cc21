# source: https://github.com/heykeetae/Self-Attention-GAN/issues/7
# exercise: attention_scores
# accept: element-?wise|torch\.mul\b|\* instead of @|not a matrix (product|multiplication)|matrix (product|multiplication) instead|matmul|each query (only )?with its own key|only the diagonal
# why: multiplies q and k element by element and sums over d: each query meets only the key at its own position, giving (..., T, 1) instead of the (..., T, S) table
# base: base_notebook_plt
# step 2: how much does each query like each key?
def attention_scores(q, k):
    # a dot product is multiply then add up, so do that for every token?
    return (q * k).sum(dim=-1, keepdim=True)
