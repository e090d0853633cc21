# source: https://github.com/bentrevett/pytorch-seq2seq/issues/191
# exercise: apply_mask
# accept: -?inf|infinity|large negative|1e9|1e\+?9|finite|big negative|overflow
# why: fills masked scores with -1e9 instead of -inf
# base: base_notebook


def apply_mask(scores, mask):
    assert mask.dtype == torch.bool, "mask must be bool"
    return scores.masked_fill(~mask, -1e9)
