# source: https://github.com/neubig/minbert-assignment/pull/5
# exercise: SelfAttentionHead
# accept: before (the )?softmax|after (the )?softmax|scores|order|weights
# why: applies dropout to the raw scores before the softmax instead of to the weights after it
# base: base_boolmask


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        causal = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", causal)
        self.attn_drop = nn.Dropout(p=dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale
        allowed = self.tril[:T, :T]
        scores = scores.masked_fill(~allowed, float("-inf"))
        scores = self.attn_drop(scores)
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, v)
