# expect: lose
# assignment: attention
# exercise: attention
# message: reorder|position
# clause: attention.causal_false
# diagnosis: attention_position_bias_when_not_causal
# why: with causal=False attention adds a distance penalty -0.5*|i - j| to the scores (ALiBi-style position information), so permuting the tokens no longer just permutes the results
# may_fail: attention::test_causal_false_*, multi_head_attention::test_causal_false_*
# replace: weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1 ==> pos = torch.arange(q.shape[-2], device=q.device); scores = scores if causal else scores - 0.5 * (pos[:, None] - pos[None, :]).abs().to(scores.dtype); weights = softmax(scores, dim=-1)
