# source: classic (no public example found)
# exercise: mix_values
# accept: bmm|3-?d|leading dims?|batch (dims?|shape)|2-?d|4-?d|number of dims
# why: torch.bmm only takes 3-D tensors, so a plain (T, S) input and the (B, H, T, S) heads fail
# base: correct_loops

def mix_values(weights, v):
    return torch.bmm(weights, v)
