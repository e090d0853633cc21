# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: differs|mean
# clause: general.leading_dims
# diagnosis: bag_of_past_assumes_batch_dim
# why: bag_of_past takes the running sum over dim=1, the time axis only for a (B, T, d) input; a plain (T, d) or a 4-D (B, H, T, d) input sums over the wrong axis
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    """Uniform-attention baseline: row t is the mean of v[..., :t+1, :].

    v: (..., T, d) -> (..., T, d). Same as attention with weight 1/(t+1) on
    every allowed position.
    """
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)  # (T,) = 1..T
    return v.cumsum(dim=1) / counts.unsqueeze(-1)
