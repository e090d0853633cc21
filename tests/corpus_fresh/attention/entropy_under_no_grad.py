# source: classic (no public example found)
# exercise: attention_entropy
# accept: no_grad|grad|detach|differentiab|backward
# why: computes the entropy inside torch.no_grad(), so no gradient flows back to the weights
# base: base_notebook


def attention_entropy(weights):
    with torch.no_grad():
        p = weights
        log_p = torch.log(torch.clamp(p, min=torch.finfo(p.dtype).tiny))
        return -(p * log_p).sum(dim=-1)
