# source: https://github.com/cerebroai/reformers/issues/3
# exercise: apply_mask
# accept: nan|0 ?\* ?-?inf|multipl|times -?inf|arithmetic
# why: builds the mask arithmetically: (1 - m) * -inf is 0 * -inf = NaN on every allowed position
# base: correct_tril_matmul

def apply_mask(scores, mask):
    m = mask.to(scores.dtype)
    return scores * m + (1 - m) * float('-inf')
