# source: https://github.com/leaderj1001/Attention-Augmented-Conv2d/issues/6
# exercise: mix_values
# accept: transpos|column|wrong (axis|side|order)|weights\.T|rows?|swap
# why: multiplies the transposed weights by v: column s mixes instead of row t
# base: base_where


def mix_values(weights, v):
    return torch.matmul(weights.transpose(-2, -1), v)
