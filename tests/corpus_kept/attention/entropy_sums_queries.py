# source: classic (no public example found)
# exercise: attention_entropy
# accept: \bdim\b|axis|row|column|quer|-2|along
# why: sums p log p over dim -2 (the queries, a column) instead of over each row's keys
# base: base_functional
def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    tiny = torch.finfo(weights.dtype).tiny
    return -(weights * weights.clamp(min=tiny).log()).sum(-2)
