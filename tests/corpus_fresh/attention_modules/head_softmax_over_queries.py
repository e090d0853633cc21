# source: https://github.com/PetrochukM/PyTorch-NLP/issues/2
# exercise: SelfAttentionHead
# accept: dim|axis|column|over (the )?quer|wrong (axis|direction)|rows?
# why: softmax over dim=1 of the (B, T, T) scores: columns sum to 1, not rows
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
        weights = torch.softmax(scores, dim=1)
        weights = self.attn_drop(weights)
        return torch.matmul(weights, v)
