# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ModuleList|parameters|registered
# diagnosis: mha_heads_python_list
# why: heads kept in a plain Python list: their parameters and buffers are not registered, .to() and state_dict miss them
# may_fail: MultiHeadAttention::test_heads_are_a_modulelist_of_self_attention_heads, MultiHeadAttention::test_weights_load_under_contract_names*
# may_fail: MultiHeadAttention::test_tril_is_a_registered_buffer*, MultiHeadAttention::test_moves_to_the_inputs_device*
# may_fail: MultiHeadAttention::test_follows_module_dtype*, MultiHeadAttention::test_gradients_flow_to_the_input*
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
        self.heads = list(
            SelfAttentionHead(d_model, head_size, context_length, dropout)
            for _ in range(n_heads)
        )
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.cat([h(x) for h in self.heads], dim=-1)  # (B, T, d_model)
        return self.dropout(self.proj(out))
