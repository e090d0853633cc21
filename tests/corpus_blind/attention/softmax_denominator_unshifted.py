# source: classic (no public example found)
# exercise: softmax
# accept: denominator|not shifted|unshifted|without (the )?(max|shift)|exp\(scores\)|sum of (the )?(unshifted|raw)|shift(ed)? (only|just)|overflow
# why: subtracts the max in the numerator but sums exp of the raw scores in the denominator: rows sum to exp(-max) instead of 1, and exp(1e4) overflows to inf
# base: base_colab_cells

# Step 5: softmax by hand -- why subtract the max?  (exp(1e4) is inf)
def softmax(scores, dim=-1):
    biggest = scores.amax(dim=dim, keepdim=True).detach()
    biggest = torch.where(torch.isinf(biggest), torch.zeros_like(biggest), biggest)
    ex = torch.exp(scores - biggest)
    total = torch.exp(scores).sum(dim=dim, keepdim=True)
    return ex / total
