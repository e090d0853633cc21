# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: device
# diagnosis: head_mask_built_in_forward
# why: registers tril but masks with a fresh CPU torch.tril(torch.ones(T, T)) built in forward, which fails off the CPU
# may_fail: *::test_moves_to_the_inputs_device*

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
        wei = wei.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
        wei = torch.softmax(wei, dim=-1)
        wei = self.dropout(wei)  # active only in training mode
        return wei @ v
