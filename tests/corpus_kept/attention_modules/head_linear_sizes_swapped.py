# source: https://github.com/TACJu/TransFG/issues/21
# exercise: SelfAttentionHead
# accept: in_features|out_features|swap|revers|nn\.Linear\(head_size|(input|output) (size|width|dim)|in and out
# why: creates nn.Linear(head_size, d_model) for query, key and value: in and out sizes are swapped, so they only fit when head_size == d_model
# base: base_bool_mask
class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(head_size, d_model, bias=False)
        self.key = nn.Linear(head_size, d_model, bias=False)
        self.value = nn.Linear(head_size, d_model, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.scale = 1.0 / math.sqrt(head_size)
        self.attn_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale
        allowed = self.tril[:T, :T]
        scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
        weights = scores.softmax(dim=-1)
        weights = self.attn_drop(weights)
        return torch.matmul(weights, v)
