# source: https://github.com/graphcore-research/unit-scaling/issues/86
# exercise: scale_scores
# accept: head_?size|head size|ignor|last dim|number of keys|sequence length|length|columns|scores\.shape
# why: ignores the head_size argument and divides by the square root of the scores' last dim (the number of keys S)
# base: base_notebook_plt
# step 3: why sqrt? the dot product of d unit-variance numbers has std sqrt(d)
def scale_scores(scores, head_size):
    d = scores.shape[-1]  # the last dim is the size we scale by?
    return scores / math.sqrt(d)
