# source: public code (code-search hit; the index does not name the repository): "wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))" (result not assigned)
# exercise: bag_of_past
# accept: future|not (assigned|kept|used)|discard|dropped|ignor|all (t )?positions|whole sequence|masked_fill|mean of all
# why: the masked_fill result is not assigned, so every row averages all T positions, the future included
# base: correct_logsumexp

def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    T = v.shape[-2]
    tril = torch.tril(torch.ones(T, T, device=v.device))
    wei = torch.zeros(T, T, device=v.device, dtype=v.dtype)
    wei.masked_fill(tril == 0, float("-inf"))
    wei = softmax(wei, dim=-1)
    return wei @ v
