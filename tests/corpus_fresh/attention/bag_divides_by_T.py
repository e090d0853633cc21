# source: classic (no public example found)
# exercise: bag_of_past
# accept: \bT\b|t ?\+ ?1|count|length|divid|mean|how many
# why: divides every running sum by T instead of by t+1
# base: base_where


def bag_of_past(v):
    T = v.shape[-2]
    running = torch.cumsum(v, dim=-2)
    return running / T
