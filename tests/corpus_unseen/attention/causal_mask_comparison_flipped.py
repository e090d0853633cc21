# source: classic (no public example found)
# exercise: causal_mask
# accept: upper|triu|transpos|future|flipped|comparison|revers|opposite|wrong (side|triangle)
# why: the comparison is reversed (cols >= rows), giving the upper triangle: each token sees the future, not the past
# base: correct_dot_product_loops

def causal_mask(T, device=None):
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols >= rows
