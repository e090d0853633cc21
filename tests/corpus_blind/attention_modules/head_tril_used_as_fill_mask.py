# source: https://github.com/lucidrains/halonet-pytorch/issues/4
# exercise: SelfAttentionHead
# accept: invert|revers|opposite|upper|future|allowed (positions|places)|== ?0|wrong way|(blocks?|hides?) the past|swapp|true (where|means)
# why: passes the tril itself (as bool) to masked_fill, which fills where the mask is True: the past and the diagonal get -inf and only the future is kept
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
        wei = torch.einsum("btd,bsd->bts", q, k) / (self.head_size ** 0.5)
        wei = wei.masked_fill(self.tril[:T, :T].bool(), float("-inf"))  # masked_fill wants a bool mask
        wei = F.softmax(wei, dim=-1)
        wei = self.drop(wei)
        return torch.einsum("bts,bsd->btd", wei, v)
