# expect: lose
# assignment: attention
# exercise: attention
# message: NaN|-inf before the softmax
# clause: attention.causal
# diagnosis: attention_renormalises_after_softmax
# why: softmax over all positions first, then zero the future and renormalise each row; equal to the right answer until a future score is ~1e4 larger, when every allowed exp() underflows and the row becomes 0/0
# may_fail: attention::test_huge_future*
# replace: scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device)) ==> pass  # no mask on the scores...
# replace: weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1 ==> weights = softmax(scores, dim=-1); weights = weights.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0) if causal else weights; weights = weights / weights.sum(-1, keepdim=True)  # ...zero the future, renormalise
