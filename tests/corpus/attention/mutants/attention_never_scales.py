# expect: lose
# assignment: attention
# exercise: attention
# message: scal|sqrt
# diagnosis: attention_never_scales
# why: attention forgets to scale: scale=True divides by nothing
# may_fail: multi_head_attention::test_scores_scaled*, attention::test_unscaled_weights_saturate
# replace: scores = scale_scores(scores, q.shape[-1]) ==> scores = scores
