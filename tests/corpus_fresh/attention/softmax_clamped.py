# source: public code (code-search hit; attention_softmax helper): "x = torch.clamp(x, min=-50.0)"
# exercise: softmax
# accept: clamp|exactly (0|zero)|-?inf|masked.*(weight|zero)|not (exactly )?zero|leak
# why: clamps the shifted scores at -50, so a -inf score gets a tiny weight instead of exactly 0
# base: base_einsum


def softmax(scores, dim=-1):
    top = scores.amax(dim=dim, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    shifted = torch.clamp(scores - top, min=-50.0)
    ex = torch.exp(shifted)
    return ex / ex.sum(dim=dim, keepdim=True)
