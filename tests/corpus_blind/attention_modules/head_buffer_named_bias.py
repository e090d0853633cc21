# source: https://github.com/karpathy/nanoGPT/issues/154
# exercise: SelfAttentionHead
# accept: \btril\b|named|\bname\b|state_dict|\"bias\"|'bias'|buffer called
# why: registers the causal buffer under nanoGPT's name "bias" instead of "tril": the outputs are right but state_dict has no tril key
# base: base_additive_bias

class SelfAttentionHead(nn.Module):
    """A single causal head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("bias", allowed)  # the name GPT-2 checkpoints use
        self.attn_drop = nn.Dropout(dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        bias = torch.zeros(T, T, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~self.bias[:T, :T], float("-inf"))
        att = torch.softmax(scores + bias, dim=-1)
        att = self.attn_drop(att)
        return torch.matmul(att, v)
