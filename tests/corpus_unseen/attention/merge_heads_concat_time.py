# source: classic (no public example found)
# exercise: merge_heads
# accept: time|dim ?=? ?1|sequence|along (the )?(wrong|time|t\b)|\(b, ?h ?\* ?t
# why: concatenates the heads along the time axis, giving (B, H*T, d_head) instead of (B, T, H*d_head)
# base: correct_loops

def merge_heads(x):
    n_heads = x.shape[1]
    return torch.cat([x[:, h] for h in range(n_heads)], dim=1)
