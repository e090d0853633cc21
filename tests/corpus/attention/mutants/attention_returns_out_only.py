# expect: lose
# assignment: attention
# exercise: attention
# message: tuple|\(out, weights\)
# clause: attention.returns_out_and_weights
# diagnosis: attention_returns_out_only
# why: attention returns only out, not the tuple (out, weights) the contract asks for
# may_fail: attention::test_weights_*, attention::test_future_tokens*, attention::test_scale_false*, attention::test_causal_false_*
# may_fail: attention::test_unscaled*, attention::test_huge_future*, multi_head_attention::*
# replace: return mix_values(weights, v), weights  # (..., T, d_v), (..., T, T) ==> return mix_values(weights, v)
