# source: https://github.com/rasbt/LLMs-from-scratch/issues/60
# exercise: apply_mask
# accept: in.?place|masked_fill_|modif|mutat|caller|input
# why: masked_fill_ writes -inf into the caller's scores tensor
# base: base_where


def apply_mask(scores, mask):
    return scores.masked_fill_(~mask, float("-inf"))
