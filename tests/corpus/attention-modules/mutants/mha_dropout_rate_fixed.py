# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: dropout=0\.0|rate
# clause: MultiHeadAttention.dropout_rate
# diagnosis: mha_dropout_rate_fixed
# why: the dropout after proj uses a fixed rate of 0.2 (F.dropout(..., 0.2, self.training)) instead of the dropout argument; eval mode and dropout=0.5 look right, only dropout=0.0 in training mode shows it
# may_fail: MultiHeadAttention::test_no_dropout_at_rate_zero_in_training_mode*

# The reference's definition(s) with this case's change, whole: they replace the reference's.
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
        return nn.functional.dropout(self.proj(out), 0.2, self.training)
