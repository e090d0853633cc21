# expect: lose
# assignment: attention
# exercise: scale_scores
# message: view|contiguous|stride
# clause: general.non_contiguous
# diagnosis: scale_scores_flattens_with_view
# why: scale_scores flattens with .view(-1) and views back; right for contiguous scores, a RuntimeError for non-contiguous ones (use reshape, or just divide)
# may_fail: none
# replace: return scores / math.sqrt(head_size) ==> return (scores.view(-1) / math.sqrt(head_size)).view(scores.shape)
