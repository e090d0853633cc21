# source: https://github.com/pytorch/pytorch/issues/1053
# exercise: MultiHeadAttention
# accept: ModuleList|list|regist|parameters|\.to\(
# why: keeps the heads in a plain Python list: their parameters are not registered and .to() skips them
# base: base_nanogpt


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        head_size = d_model // n_heads
        self.heads = [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out
