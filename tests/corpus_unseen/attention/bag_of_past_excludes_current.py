# source: classic (no public example found)
# exercise: bag_of_past
# accept: t ?\+ ?1|:t\b|off[- ]by[- ]one|current|itself|own (position|token)|empty|nan|position t
# why: averages v[:t], leaving out position t itself (row 0 is the mean of nothing: NaN)
# base: correct_head_loop

def bag_of_past(v):
    T = v.shape[-2]
    xbow = torch.zeros_like(v)
    outs = []
    for t in range(T):
        xprev = v[..., :t, :]  # (..., t, C)
        outs.append(torch.mean(xprev, dim=-2))
    xbow = torch.stack(outs, dim=-2)
    return xbow
