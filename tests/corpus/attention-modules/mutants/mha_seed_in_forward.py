# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: manual_seed
# clause: MultiHeadAttention.dropout_after_proj
# diagnosis: mha_seed_in_forward
# why: MultiHeadAttention's forward calls torch.manual_seed(1337) before running its heads: every call draws the same dropout masks, and the caller's random state is reset
# may_fail: MultiHeadAttention::test_dropout_active_in_training_mode*

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
        torch.manual_seed(1337); out = torch.cat([h(x) for h in self.heads], dim=-1)  # the same masks on every call
        return self.dropout(self.proj(out))
