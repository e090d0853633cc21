# source: public code (code-search hit; barkinadiguzel/VisionTransformer-Paper-Replication src/2_attention/multi_head_attention.py): "assert d_model % h == 0"
# exercise: MultiHeadAttention
# accept: ValueError|assert|raise|divisib|exception
# why: checks d_model % n_heads with assert (AssertionError) instead of raising ValueError
# base: base_nanogpt


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        assert d_model % n_heads == 0, "d_model must be divisible by n_heads"
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
