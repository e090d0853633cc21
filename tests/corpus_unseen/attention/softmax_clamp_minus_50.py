# source: public code (code-search hit; the index does not name the repository): "x = torch.clamp(x, min=-50.0)  # clamp to avoid exp underflow -> nan"
# exercise: softmax
# accept: clamp|-50|exactly (0|zero)|non-?zero weight|e ?\*\* ?-50|leak
# why: clamps the shifted scores at -50, so a -inf position gets weight e**-50 instead of exactly 0
# base: correct_tril_matmul

def softmax(scores, dim=-1):
    x = scores - scores.max(dim=dim, keepdim=True).values
    x = torch.clamp(x, min=-50.0)  # avoid exp underflow
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)
