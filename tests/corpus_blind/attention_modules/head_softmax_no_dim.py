# source: https://github.com/microsoft/hi-ml/pull/567
# exercise: SelfAttentionHead
# accept: \bdim\b|dimension|axis|batch|implicit|over (the )?(batch|queries|wrong)
# why: builds nn.Softmax() without dim: for the 3-D (B, T, T) scores PyTorch's implicit choice is dim 0, so the weights are normalised across the batch
# base: base_additive_bias

class SelfAttentionHead(nn.Module):
    """A single causal head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.softmax = nn.Softmax()
        self.attn_drop = nn.Dropout(dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        bias = torch.zeros(T, T, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~self.tril[:T, :T], float("-inf"))
        att = self.softmax(scores + bias)
        att = self.attn_drop(att)
        return torch.matmul(att, v)
