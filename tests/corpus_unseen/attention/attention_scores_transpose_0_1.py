# source: classic (no public example found)
# exercise: attention_scores
# accept: transpose\(0, ?1\)|batch|leading dims?|last two dims?|wrong (dims|axes)
# why: transposes dims 0 and 1 of k, which are the last two dims only for a 2-D input
# base: correct_additive_mask

def attention_scores(q, k):
    return torch.matmul(q, k.transpose(0, 1))
