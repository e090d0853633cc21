# source: https://github.com/pytorch/pytorch/pull/92817
# exercise: causal_mask
# accept: bool|float|additive|-inf|dtype|0 and -inf|0/-inf
# why: returns the additive float mask of nn.Transformer.generate_square_subsequent_mask (0 where allowed, -inf above the diagonal) instead of a bool mask
# base: base_defensive

def causal_mask(T: int, device: Optional[torch.device | str] = None) -> Tensor:
    assert int(T) >= 0, "T must be a non-negative length"
    # like nn.Transformer.generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere
    blocked = torch.full((T, T), float("-inf"), device=device)
    return torch.triu(blocked, diagonal=1)
