# source: classic (no public example found)
# exercise: MultiHeadAttention
# accept: \bdim\b|axis|time|last dim|concat|cat\b
# why: concatenates the heads' outputs along dim=1 (time) instead of the last dim, so proj gets (B, n_heads*T, head_size)
# base: base_float_tril
class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=1)
        out = self.dropout(self.proj(out))
        return out
