# source: https://github.com/esceptico/perceiver-io/issues/9
# exercise: SelfAttentionHead
# accept: multipl|instead of divid|times (the )?sqrt|\* ?sqrt|scaled up|larger|\*\* ?0\.5|inverse|upside
# why: multiplies the scores by head_size ** 0.5 instead of dividing by it (or multiplying by head_size ** -0.5)
# base: base_einsum_heads

class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.head_size = head_size
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        k = self.key(x)
        q = self.query(x)
        v = self.value(x)
        wei = torch.einsum("btd,bsd->bts", q, k) * (self.head_size ** 0.5)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.drop(wei)
        return torch.einsum("bts,bsd->btd", wei, v)
