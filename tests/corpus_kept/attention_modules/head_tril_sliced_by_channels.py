# source: classic (no public example found)
# exercise: SelfAttentionHead
# accept: slic|\[:C|channels|d_model|sequence length|context|mask (size|shape)|T ?!= ?C|shorter
# why: slices the buffer with the channel count C (tril[:C, :C]) instead of the sequence length T, so the mask only fits when T == C
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
        wei = wei.masked_fill(self.tril[:C, :C] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)  # (B,T,hs)
        return wei @ v
