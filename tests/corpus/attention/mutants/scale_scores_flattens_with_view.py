# expect: lose
# assignment: attention
# exercise: scale_scores
# message: view|contiguous|stride
# clause: general.non_contiguous
# diagnosis: scale_scores_flattens_with_view
# why: scale_scores flattens with .view(-1) and views back; right for contiguous scores, a RuntimeError for non-contiguous ones (use reshape, or just divide)
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    """Divide the scores by ``sqrt(head_size)`` so their spread does not grow with d."""
    return (scores.view(-1) / math.sqrt(head_size)).view(scores.shape)
