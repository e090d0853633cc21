# expect: lose
# assignment: attention
# exercise: attention
# message: sum to 1|weights|differs
# diagnosis: attention_softmax_over_queries
# why: attention takes the softmax over dim=-2 (the queries) instead of the last dim (the keys)
# may_fail: attention::test_weights_rows_sum_to_one, attention::test_future_tokens*, multi_head_attention::test_future_tokens*
# replace: weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1 ==> weights = softmax(scores, dim=-2)  # over the queries
