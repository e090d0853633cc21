# source: classic (no public example found)
# exercise: MultiHeadAttention
# accept: ValueError|divisib|divid|multiple|check|raise|remainder|%
# why: never checks d_model % n_heads: with a remainder the heads cover fewer than d_model channels and the error only comes later, in forward, instead of a ValueError
# base: base_float_tril
class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out
