# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: 0\.1
# clause: SelfAttentionHead.dropout_rate
# diagnosis: head_dropout_rate_fixed
# why: the head builds nn.Dropout(0.1), a constant, whatever its dropout argument is
# may_fail: *::test_no_dropout_at_rate_zero_in_training_mode*, *::test_dropout_drops_at_the_asked_rate*, callers::test_dropout_reaches_the_heads


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(0.1)  # a constant rate, not the dropout argument

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = self.dropout(torch.softmax(wei, dim=-1))
        return wei @ v
