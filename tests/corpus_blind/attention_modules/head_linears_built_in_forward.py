# source: https://thecodeforge.io/ml-ai/pytorch-neural-network/
# exercise: SelfAttentionHead
# accept: forward|regist|parameters?|state_dict|new (weights|layers?|linear)|every (call|pass)|each (call|pass)|random|__init__
# why: creates the query, key and value nn.Linear layers inside forward: they are not registered, so the head has no parameters and draws new random weights on every call
# base: base_additive_bias

class SelfAttentionHead(nn.Module):
    """A single causal head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.d_model = d_model
        self.head_size = head_size
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.attn_drop = nn.Dropout(dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x):
        B, T, C = x.shape
        query = nn.Linear(self.d_model, self.head_size, bias=False).to(x.device, x.dtype)
        key = nn.Linear(self.d_model, self.head_size, bias=False).to(x.device, x.dtype)
        value = nn.Linear(self.d_model, self.head_size, bias=False).to(x.device, x.dtype)
        q, k, v = query(x), key(x), value(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        bias = torch.zeros(T, T, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~self.tril[:T, :T], float("-inf"))
        att = torch.softmax(scores + bias, dim=-1)
        att = self.attn_drop(att)
        return torch.matmul(att, v)
