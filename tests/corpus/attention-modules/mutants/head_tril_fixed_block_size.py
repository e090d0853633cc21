# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: context_length
# clause: SelfAttentionHead.tril_shape
# diagnosis: head_tril_fixed_block_size
# why: tril is built at a hard-coded block size of 8 instead of context_length; right at context_length 8, but longer inputs crash
# may_fail: *::test_tril_is_built_at_context_length*

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
        self.register_buffer("tril", torch.tril(torch.ones(8, 8)))  # BLOCK_SIZE
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
        return wei @ v
