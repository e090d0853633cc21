# source: https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/issues/97
# exercise: MultiHeadAttention
# accept: interleav|stack|order|head after head|mix(es|ed)? (the )?(heads|channels)|concat|side by side|in order
# why: torch.stack()s the heads on the last dim and reshapes to (B, T, d_model): the channels come out interleaved (head 0 ch 0, head 1 ch 0, ...) instead of head after head
# base: base_additive_bias

class MultiHeadAttention(nn.Module):
    """Several heads in parallel, concatenated and projected back to d_model."""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
        head_size = d_model // n_heads
        heads = [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        self.heads = nn.ModuleList(heads)
        self.proj = nn.Linear(d_model, d_model)
        self.out_drop = nn.Dropout(dropout)

    def forward(self, x):
        B, T, _ = x.shape
        outs = [head(x) for head in self.heads]
        y = torch.stack(outs, dim=-1).reshape(B, T, -1)  # (B, T, hs, H) -> (B, T, d_model)
        y = self.proj(y)
        return self.out_drop(y)
