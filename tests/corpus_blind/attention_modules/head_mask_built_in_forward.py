# source: https://github.com/pytorch/pytorch/pull/166119
# exercise: SelfAttentionHead
# accept: buffer|\btril\b|state_dict|device|\bcpu\b|cuda|gpu|\.to\(
# why: registers no tril buffer and builds torch.tril(torch.ones(T, T)) in forward: no tril in state_dict, and the mask is always on the CPU (CPU outputs unchanged)
# base: base_einsum_heads

class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.head_size = head_size
        self.context_length = context_length
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        k = self.key(x)
        q = self.query(x)
        v = self.value(x)
        wei = torch.einsum("btd,bsd->bts", q, k) / (self.head_size ** 0.5)
        tril = torch.tril(torch.ones(T, T))  # only as big as this batch needs
        wei = wei.masked_fill(tril == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.drop(wei)
        return torch.einsum("bts,bsd->btd", wei, v)
