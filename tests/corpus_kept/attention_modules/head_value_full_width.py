# source: classic (no public example found)
# exercise: SelfAttentionHead
# accept: value (projection|linear|layer)|self\.value|out_features|\(B, ?T, ?d_model\)|full width|head_?size|head size
# why: makes the value projection nn.Linear(d_model, d_model): the head returns (B, T, d_model) instead of (B, T, head_size)
# base: base_bool_mask
class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, d_model, bias=False)  # values keep the full width
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
