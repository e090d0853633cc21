# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|inf
# diagnosis: apply_mask_fill_finfo_min
# why: apply_mask fills masked positions with torch.finfo(dtype).min instead of -inf
# may_fail: none
# replace: return scores.masked_fill(~mask, float("-inf")) ==> return scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
