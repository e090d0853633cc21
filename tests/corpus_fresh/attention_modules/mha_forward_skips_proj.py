# source: https://github.com/jwallbridge/translob/issues/4
# exercise: MultiHeadAttention
# accept: proj|projection|W_?O|linear|output
# why: forward concatenates the heads and returns them without applying proj
# base: base_boolmask


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"{d_model=} is not divisible by {n_heads=}")
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, d_model // n_heads, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model)
        self.resid_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        joined = torch.cat(outputs, dim=-1)
        return self.resid_drop(joined)
