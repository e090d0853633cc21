# source: public code (code-search hit; the index does not name the repository): "xprev = x[b,:+1]"
# exercise: bag_of_past
# accept: first|:\+1|:1\b|typo|t ?\+ ?1|constant|same (row|value)|only (the )?first
# why: typo :+1 for :t+1, so every row is the mean of the first token alone
# base: correct_loops

def bag_of_past(v):
    T = v.shape[-2]
    rows = []
    for t in range(T):
        rows.append(v[..., :+1, :].mean(dim=-2))
    return torch.stack(rows, dim=-2)
