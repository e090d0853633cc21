# expect: lose
# assignment: attention
# exercise: attention
# message: second call on the same inputs gives a different out
# diagnosis: none (the answer moves from call to call: no fixed mistake reproduces noise)
# why: attention adds a little Gaussian noise to its output ("dropout, as I read about"), so it is not deterministic; the worked example must say so, not tell the student to mix the values
# may_fail: multi_head_attention::*
# replace: return mix_values(weights, v), weights  # (..., T, d_v), (..., T, T) ==> return mix_values(weights, v) + 1e-3 * torch.randn_like(mix_values(weights, v)), weights
