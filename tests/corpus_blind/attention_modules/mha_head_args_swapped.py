# source: classic (no public example found)
# exercise: MultiHeadAttention
# accept: order|swap|argument|positional|context_length|keyword
# why: builds each head as SelfAttentionHead(d_model, hs, dropout, context_length): context_length and dropout change places, so the heads cannot be built
# base: base_einsum_heads

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model has to be divisible by n_heads")
        hs = d_model // n_heads
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, hs, dropout, context_length))
        self.proj = nn.Linear(d_model, d_model)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cat([h(x) for h in self.heads], dim=-1)
        return self.resid_dropout(self.proj(y))
