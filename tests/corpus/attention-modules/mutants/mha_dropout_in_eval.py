# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: eval|dropout|training
# diagnosis: mha_dropout_in_eval
# nondeterministic: true
# why: output dropout via F.dropout(..., training=True), so it stays on in eval mode
# may_fail: MultiHeadAttention::test_no_dropout_in_eval_mode*

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
        return nn.functional.dropout(self.proj(out), self.dropout.p, training=True)
