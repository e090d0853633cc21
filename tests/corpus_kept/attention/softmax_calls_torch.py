# source: classic (no public example found)
# exercise: softmax
# accept: torch\.softmax|F\.softmax|built-?in|library|by hand|yourself|not allowed|forbidden|own softmax|off limits
# why: calls torch.softmax, which the exercise forbids: the softmax must be written by hand
# base: base_shapes
def softmax(scores, dim=-1):
    # torch already has a stable one
    probs = torch.softmax(scores, dim=dim)
    assert probs.shape == scores.shape
    return probs
