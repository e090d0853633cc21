# source: https://github.com/avalonstrel/GatedConvolution_pytorch/issues/41
# exercise: SelfAttentionHead
# accept: scal|sqrt|√|head_size|head size
# why: computes self.scale = 1/sqrt(head_size) in __init__ but never multiplies the scores by it
# base: base_bool_mask
class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.scale = 1.0 / math.sqrt(head_size)
        self.attn_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2))
        allowed = self.tril[:T, :T]
        scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
        weights = scores.softmax(dim=-1)
        weights = self.attn_drop(weights)
        return torch.matmul(weights, v)
