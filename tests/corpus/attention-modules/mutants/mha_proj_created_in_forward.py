# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: created in forward|__init__
# diagnosis: none (structural; the weights are right once made, but proj only exists after the first forward)
# why: proj is created lazily in forward, so it is missing when the module is built: load_state_dict, the optimizer and .to() never see it
# may_fail: MultiHeadAttention::test_weights_load_under_contract_names*, MultiHeadAttention::test_proj_is_a_linear_d_model_to_d_model, MultiHeadAttention::test_no_dropout_in_eval_mode*, MultiHeadAttention::test_no_dropout_at_rate_zero_in_training_mode*


class MultiHeadAttention(nn.Module):  # noqa: F811 - replaces the reference's class
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"MultiHeadAttention: d_model={d_model} is not divisible by n_heads={n_heads}")
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)
        )
        self.proj = None  # made in forward, once the input's size is known
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        if self.proj is None:
            self.proj = nn.Linear(out.shape[-1], out.shape[-1]).to(out)
        return self.dropout(self.proj(out))
