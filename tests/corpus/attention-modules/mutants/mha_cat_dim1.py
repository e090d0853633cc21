# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: concat|shape|last dim
# diagnosis: mha_cat_dim1
# why: concatenates the heads' outputs along dim 1 (time) instead of the last dim
# may_fail: MultiHeadAttention::test_future_tokens*, MultiHeadAttention::test_moves_to*, MultiHeadAttention::test_follows_module_dtype*
# may_fail: MultiHeadAttention::test_causal_in_training_mode*
# may_fail: MultiHeadAttention::test_gradients_flow*, MultiHeadAttention::test_no_dropout*, MultiHeadAttention::test_dropout_*
# may_fail: MultiHeadAttention::test_tril_is_built_at_context_length*

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
        out = torch.cat([h(x) for h in self.heads], dim=1)  # (B, T, d_model)
        return self.dropout(self.proj(out))
