# source: https://github.com/aladdinpersson/Machine-Learning-Collection/issues/3
# exercise: MultiHeadAttention
# accept: slice|split (the )?input|d_model|full (input|width)|every channel|whole (input|x)|input (size|width)|in_features|part of (the )?input|only sees|own (chunk|slice)|\(hs, ?hs\)|head_size, ?head_size
# why: gives head i only its slice x[..., i*hs:(i+1)*hs] and builds it as SelfAttentionHead(hs, hs, ...): each head's projections see hs input channels instead of all d_model
# base: base_einsum_heads

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model has to be divisible by n_heads")
        hs = d_model // n_heads
        self.hs = hs
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            # each head works on its own chunk of the embedding
            self.heads.append(SelfAttentionHead(hs, hs, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        chunks = [x[..., i * self.hs:(i + 1) * self.hs] for i in range(len(self.heads))]
        y = torch.cat([h(c) for h, c in zip(self.heads, chunks)], dim=-1)
        return self.resid_dropout(self.proj(y))
