# expect: placeholder
# assignment: attention-modules
# base: reference
# why: the contract's submodules and buffers, but forward returns 0 * a projection of x: computes nothing

# The reference's definition(s) with this case's change, whole: they replace the reference's.
class SelfAttentionHead(nn.Module):
    """One causal self-attention head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(
        self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        # A buffer, not a plain attribute: .to() moves it and state_dict saves it.
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q = self.query(x)  # (B, T, hs)
        k = self.key(x)  # (B, T, hs)
        v = self.value(x)  # (B, T, hs)
        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5  # (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = torch.softmax(wei, dim=-1)
        wei = self.dropout(wei)  # active only in training mode
        return 0 * self.query(x)

class MultiHeadAttention(nn.Module):
    """n_heads heads side by side, concatenated and projected: (B, T, d_model) -> same."""

    def __init__(
        self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0
    ) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(
                f"MultiHeadAttention: d_model={d_model} is not divisible by n_heads={n_heads}"
            )
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            SelfAttentionHead(d_model, head_size, context_length, dropout)
            for _ in range(n_heads)
        )
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.cat([h(x) for h in self.heads], dim=-1)  # (B, T, d_model)
        return self.dropout(0 * self.proj(x))
