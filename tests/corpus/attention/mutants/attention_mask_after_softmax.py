# expect: lose
# assignment: attention
# exercise: attention
# message: sum to 1|rows?
# diagnosis: attention_mask_after_softmax
# why: attention applies the causal mask after softmax by zeroing future weights, so rows no longer sum to 1
# may_fail: attention::test_weights_rows_sum_to_one, attention::test_future_tokens*, attention::test_huge_future*
# may_fail: multi_head_attention::test_future_tokens*
# replace: scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device)) ==> pass  # no mask before the softmax...
# replace: weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1 ==> weights = softmax(scores, dim=-1); weights = weights.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0) if causal else weights  # ...zeros after it
