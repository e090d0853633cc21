# source: https://github.com/benhid/pyMSA/issues/9
# exercise: attention_entropy
# accept: sign|minus|negative|negat
# why: returns sum(p log p) without the minus sign: every entropy comes out negative
# base: base_notebook_plt
# step 9: how spread out is each row? 0 log 0 counts as 0
def attention_entropy(weights):
    p = weights
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return (p * torch.log(safe)).sum(dim=-1)
