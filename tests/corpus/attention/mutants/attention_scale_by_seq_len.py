# expect: lose
# assignment: attention
# exercise: attention
# message: scale|sqrt
# diagnosis: attention_scale_by_seq_len
# why: attention scales by sqrt(T) (q.shape[-2], the sequence length) instead of sqrt(d) (q.shape[-1])
# may_fail: attention::test_unscaled_weights_saturate, multi_head_attention::test_scores_scaled*
# replace: scores = scale_scores(scores, q.shape[-1]) ==> scores = scale_scores(scores, q.shape[-2])
