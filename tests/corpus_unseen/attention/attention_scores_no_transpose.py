# source: classic (no public example found)
# exercise: attention_scores
# accept: transpos|k\.?t\b|kᵀ|swap|last two dims
# why: q @ k with k not transposed: (T, d) @ (S, d) only lines up when d == S, and then it is the wrong product
# base: correct_tril_matmul

def attention_scores(q, k):
    # (..., T, d) @ (..., S, d) -> (..., T, S)
    return q @ k
