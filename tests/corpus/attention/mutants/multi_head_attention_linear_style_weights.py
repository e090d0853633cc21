# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: differs|Project
# clause: multi_head_attention.weights_applied_as_x_at_w
# diagnosis: multi_head_attention_linear_style_weights
# why: multi_head_attention applies w_q, w_k, w_v like nn.Linear weights (x @ w.T) instead of x @ w as the contract says
# may_fail: none
# replace: q = split_heads(x @ w_q, n_heads)  # (B, H, T, d_head) ==> q = split_heads(x @ w_q.T, n_heads)
# replace: k = split_heads(x @ w_k, n_heads)  # (B, H, T, d_head) ==> k = split_heads(x @ w_k.T, n_heads)
# replace: v = split_heads(x @ w_v, n_heads)  # (B, H, T, d_head) ==> v = split_heads(x @ w_v.T, n_heads)
