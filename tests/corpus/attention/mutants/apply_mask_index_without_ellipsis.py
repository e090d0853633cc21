# expect: lose
# assignment: attention
# exercise: apply_mask
# message: mask|shape|index
# clause: apply_mask.shape_and_broadcast
# diagnosis: apply_mask_index_without_ellipsis
# why: apply_mask writes -inf with out[~mask] on a copy, which needs the mask to have the scores' full shape; a (T, S) mask on batched (..., T, S) scores fails (out[..., ~mask] would broadcast)
# replace: return scores.masked_fill(~mask, float("-inf")) ==> out = scores.clone(); out[~mask] = float("-inf"); return out
