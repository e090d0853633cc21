# expect: lose
# assignment: attention
# exercise: causal_mask
# message: mask|bool|device
# diagnosis: causal_mask_bare_ones
# why: causal_mask returns torch.ones(T, T).tril(): float32 and always on the CPU (the GPT-tutorial tril)
# may_fail: causal_mask::test_mask_is_built_on_the_requested_device, callers::test_weights_*, callers::test_future_tokens*
# may_fail: callers::test_scale_false*, callers::test_unscaled*, callers::test_huge_future*, callers::test_inputs_are_not_modified*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*, callers::test_returns*
# may_fail: callers::test_scores_scaled*, callers::test_future_tokens*, callers::test_inputs_are_not_modified*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Bool (T, T) mask, True where token t may attend to token s (s <= t).

    Built directly on ``device`` (CPU when None).
    """
    return torch.tril(torch.ones(T, T))
