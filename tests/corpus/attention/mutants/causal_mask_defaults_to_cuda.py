# expect: lose
# assignment: attention
# exercise: causal_mask
# message: CPU|CUDA|cuda|NVIDIA|device
# clause: causal_mask.cpu_by_default
# diagnosis: causal_mask_defaults_to_cuda
# why: causal_mask defaults to device="cuda" (copied from a GPU notebook), so causal_mask(T) is not on the CPU (and fails on a machine without a GPU)
# may_fail: causal_mask::test_mask_is_built_on_the_requested_device

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def causal_mask(T: int, device: torch.device | str | None = "cuda") -> torch.Tensor:
    """Bool (T, T) mask, True where token t may attend to token s (s <= t).

    Built directly on ``device`` (CPU when None).
    """
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
