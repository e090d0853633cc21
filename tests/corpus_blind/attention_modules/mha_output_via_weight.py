# source: classic (no public example found)
# exercise: MultiHeadAttention
# accept: weight|transpos|bias|w\.?t\b|w\^t|call(ing|s)? (self\.)?proj|proj\(|x ?@ ?w
# why: multiplies by self.proj.weight directly (y @ W) instead of calling self.proj: nn.Linear computes y @ W.T + b, so the projection is transposed and its bias is dropped
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
        outs = [head(x) for head in self.heads]
        y = torch.cat(outs, dim=-1)  # (B, T, d_model)
        y = y @ self.proj.weight  # W_O
        return self.out_drop(y)
