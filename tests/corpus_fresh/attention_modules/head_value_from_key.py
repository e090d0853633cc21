# source: public code (code-search hit; Manikanta5112/custom_tiny_gpt v2.py): "self.query = nn.Linear(n_embd, head_size, bias=False)" written twice, the second line meant for another projection
# exercise: SelfAttentionHead
# accept: value|key|same (projection|linear|layer)|copy|two roles|self\.key
# why: takes v from self.key(x) (copy-paste), so the value projection is never used
# base: base_nanogpt


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.head_size = head_size
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * self.head_size ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.key(x)
        return wei @ v
