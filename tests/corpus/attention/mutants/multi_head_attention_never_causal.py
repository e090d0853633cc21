# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: causal|above the diagonal
# clause: multi_head_attention.causal
# diagnosis: multi_head_attention_never_causal
# why: multi_head_attention calls attention with causal=False whatever its own flag says, so every token sees the future
# may_fail: multi_head_attention::test_future_tokens*
# replace: out, weights = attention(q, k, v, causal=causal)  # (B, H, T, d_head), (B, H, T, T) ==> out, weights = attention(q, k, v, causal=False)
