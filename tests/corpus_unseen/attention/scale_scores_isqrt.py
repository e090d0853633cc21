# source: classic (no public example found)
# exercise: scale_scores
# accept: isqrt|integer|round|floor|not exact
# why: math.isqrt floors the square root, so a head size that is not a perfect square is scaled by the wrong amount
# base: correct_dot_product_loops

def scale_scores(scores, head_size):
    return scores / math.isqrt(head_size)
