# source: https://github.com/pbloem/former/issues/8
# exercise: MultiHeadAttention
# accept: head_size|head size|d_model ?// ?n_heads|full (width|size)|each head|split|n_heads ?\* ?d_model
# why: gives every head the full width (SelfAttentionHead(d_model, d_model, ...)) and a proj of n_heads*d_model inputs, instead of heads of d_model // n_heads
# base: base_float_tril
class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        # every head sees and returns the whole embedding
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, d_model, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(n_heads * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out
