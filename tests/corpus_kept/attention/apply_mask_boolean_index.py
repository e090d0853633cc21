# source: https://github.com/GRAAL-Research/deepparse/pull/298
# exercise: apply_mask
# accept: broadcast|leading dim|batch|boolean index|index(ing)?
# why: sets out[~mask] = -inf by boolean indexing, which needs the mask to have the scores' own leading shape: it does not broadcast, so batched scores raise
# base: base_notebook_plt
def apply_mask(scores, mask):
    out = scores.clone()  # copy first so the caller's scores stay as they were
    out[~mask] = float("-inf")
    return out
