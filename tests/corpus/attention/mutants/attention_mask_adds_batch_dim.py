# expect: lose
# assignment: attention
# exercise: attention
# message: shape
# diagnosis: attention_mask_adds_batch_dim
# why: attention masks with causal_mask(...).unsqueeze(0), a 3-D mask that adds a batch dim to unbatched (T, d) input
# may_fail: none
# replace: scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device)) ==> scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device).unsqueeze(0))
