# expect: lose
# assignment: attention
# exercise: softmax
# message: exactly 0
# clause: softmax.minus_inf_gets_zero
# diagnosis: none (the 1e-9 weights lie within every tolerance; only the exact-zero check sees them)
# why: softmax adds 1e-9 to every exp() "to avoid dividing by zero", so a -inf score gets a tiny weight instead of exactly 0
# may_fail: softmax::test_minus_inf_gets_exactly_zero, attention::test_weights_lower_triangular, multi_head_attention::test_future_tokens*
# replace: e = torch.exp(scores - row_max)  # all in [0, 1] ==> e = torch.exp(scores - row_max) + 1e-9  # "no division by zero"
