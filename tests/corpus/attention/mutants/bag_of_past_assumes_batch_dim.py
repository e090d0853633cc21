# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: differs|mean
# clause: general.leading_dims
# diagnosis: bag_of_past_assumes_batch_dim
# why: bag_of_past takes the running sum over dim=1, the time axis only for a (B, T, d) input; a plain (T, d) or a 4-D (B, H, T, d) input sums over the wrong axis
# may_fail: none
# replace: return v.cumsum(dim=-2) / counts.unsqueeze(-1)  # (..., T, d) / (T, 1) ==> return v.cumsum(dim=1) / counts.unsqueeze(-1)  # assumes (B, T, d)
