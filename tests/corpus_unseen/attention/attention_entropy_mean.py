# source: classic (no public example found)
# exercise: attention_entropy
# accept: mean|average|divid|number of (keys|positions|columns)|instead of (the |a )?sum
# why: averages p*log p over the row instead of summing it (the entropy divided by S)
# base: correct_additive_mask

def attention_entropy(weights):
    p = weights
    logp = torch.log(torch.where(p == 0, torch.ones_like(p), p))
    return (-p * logp).mean(-1)
