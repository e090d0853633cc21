# source: https://github.com/acids-ircam/ddsp_pytorch/issues/37
# exercise: MultiHeadAttention
# accept: same (head|module|object|instance|weights)|shar|repeat|\* ?n_heads|copies|identical|one head
# why: builds nn.ModuleList([SelfAttentionHead(...)] * n_heads): the list holds the same head n_heads times, so all heads share one set of weights
# base: base_float_tril
class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        head_size = d_model // n_heads
        self.heads = nn.ModuleList([SelfAttentionHead(d_model, head_size, context_length, dropout)] * n_heads)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out
