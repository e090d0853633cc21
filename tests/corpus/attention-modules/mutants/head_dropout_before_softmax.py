# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: before the softmax
# clause: SelfAttentionHead.causal_in_training
# diagnosis: head_dropout_before_softmax
# why: the head masks with a finite fill (torch.finfo(dtype).min) and applies dropout to the masked scores, before the softmax: a dropped fill becomes 0, so in training mode future tokens get weight and change past outputs; eval mode is right
# may_fail: *::test_causal_in_training_mode*, *::test_dropout_acts_on_the_weights*, *::test_dropout_drops_at_the_asked_rate*, callers::test_dropout_reaches_the_heads

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
        wei = self.dropout(wei.masked_fill(self.tril[:T, :T] == 0, torch.finfo(wei.dtype).min))  # dropout on the masked scores
        wei = torch.softmax(wei, dim=-1)
        pass  # no dropout after the softmax
        return wei @ v
