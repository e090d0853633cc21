# source: https://github.com/KrishnaDN/Attentive-Statistics-Pooling-for-Deep-Speaker-Embedding/issues/3
# exercise: mix_values
# accept: squeeze|size.?1|singleton|of (size|length) 1|drops? (a |the )?dim|batch of one|one token
# why: calls .squeeze() on the result, which also removes a batch, time or value dim of size 1
# base: base_functional
def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.matmul(weights, v).squeeze()
