# expect: lose
# assignment: attention
# exercise: attention
# message: tuple|\(out, weights\)
# clause: attention.returns_out_and_weights
# diagnosis: attention_returns_out_only
# why: attention returns only out, not the tuple (out, weights) the contract asks for
# replace: return mix_values(weights, v), weights  # (..., T, d_v), (..., T, T) ==> return mix_values(weights, v)
