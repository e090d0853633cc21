# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: no gradient flows back
# clause: general.differentiable
# diagnosis: bag_of_past_detached
# why: bag_of_past returns the running mean .detach()-ed, so the values are right but no gradient flows back to v
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    """Uniform-attention baseline: row t is the mean of v[..., :t+1, :].

    v: (..., T, d) -> (..., T, d). Same as attention with weight 1/(t+1) on
    every allowed position.
    """
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)  # (T,) = 1..T
    return (v.cumsum(dim=-2) / counts.unsqueeze(-1)).detach()
