# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|inf
# diagnosis: apply_mask_fill_minus_1e9
# why: apply_mask fills masked positions with -1e9 instead of -inf
# may_fail: none
# replace: return scores.masked_fill(~mask, float("-inf")) ==> return scores.masked_fill(~mask, -1e9)
