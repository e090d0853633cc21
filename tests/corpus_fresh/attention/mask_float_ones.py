# source: public code (code-search hit; ner9co/nanoGPT toy.py): "smokk = torch.tril(torch.ones((T, T)))"
# exercise: causal_mask
# accept: bool|dtype|float
# why: returns a float 0/1 tril, not a bool mask
# base: base_einsum


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device))
