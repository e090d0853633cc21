# source: https://github.com/lucidrains/performer-pytorch/issues/65
# exercise: MultiHeadAttention
# accept: bias
# why: builds proj as nn.Linear(d_model, d_model, bias=False): the output projection has no bias parameter
# base: base_bool_mask
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} does not split into {n_heads} heads")
        hs = d_model // n_heads
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, hs, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model, bias=False)  # like q, k and v
        self.out_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pieces = []
        for head in self.heads:
            pieces.append(head(x))
        y = torch.cat(pieces, dim=-1)
        return self.out_drop(self.proj(y))
