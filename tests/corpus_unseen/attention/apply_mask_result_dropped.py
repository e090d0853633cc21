# source: https://github.com/lucidrains/flamingo-pytorch/issues/10
# exercise: apply_mask
# accept: not (assigned|kept|stored|used)|discard|dropped|ignor|thrown away|masked_fill_|in[- ]place|return(ed)? value|no effect|unchanged|unmasked
# why: masked_fill returns a new tensor; its result is thrown away, so the scores come back unmasked
# base: correct_head_loop

def apply_mask(scores, mask):
    scores.masked_fill(mask.logical_not(), float('-inf'))
    return scores
