# source: classic (no public example found)
# exercise: SelfAttentionHead
# accept: tuple|two (values|things|outputs|tensors)|pair|returns? (the )?(weights|wei)\b|\(out, ?wei\)|return type|not a tensor
# why: forward returns (out, wei) so the weights can be plotted, instead of the (B, T, head_size) tensor alone
# base: base_float_tril
class SelfAttentionHead(nn.Module):
    """one head of self-attention"""

    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)
        self.head_size = head_size

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)    # (B,T,hs)
        q = self.query(x)  # (B,T,hs)
        wei = q @ k.transpose(-2, -1) * self.head_size ** -0.5  # (B,T,T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)  # (B,T,hs)
        out = wei @ v
        return out, wei  # keep the weights for the heatmap
