# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: no gradient flows back
# clause: general.differentiable
# diagnosis: bag_of_past_detached
# why: bag_of_past returns the running mean .detach()-ed, so the values are right but no gradient flows back to v
# may_fail: none
# replace: return v.cumsum(dim=-2) / counts.unsqueeze(-1)  # (..., T, d) / (T, 1) ==> return (v.cumsum(dim=-2) / counts.unsqueeze(-1)).detach()
