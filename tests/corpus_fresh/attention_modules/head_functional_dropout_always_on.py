# source: https://github.com/rixwew/pytorch-fm/issues/21
# exercise: SelfAttentionHead
# accept: training|eval|self\.training|F\.dropout|always|inference|determin
# why: uses F.dropout(weights, p) without training=self.training: dropout stays on in eval mode
# base: base_boolmask


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        causal = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", causal)
        self.p_drop = dropout
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale
        allowed = self.tril[:T, :T]
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = torch.nn.functional.dropout(weights, self.p_drop)
        return torch.matmul(weights, v)
