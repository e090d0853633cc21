# source: classic (no public example found)
# exercise: attention
# accept: itself|themselves|\bk\b.{0,30}(never|not used|unused|ignored)|keys?.{0,30}(never|not used|unused|ignored)|instead of (the )?(k|keys?)\b|q ?@ ?q|\(q, ?q\)|queries (with|against) (the )?queries
# why: computes attention_scores(q, q): each query is compared with the other queries, and k is never used
# base: base_defensive

def attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: bool = True
) -> Tuple[Tensor, Tensor]:
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one length T"
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, q)  # (..., T, T): self-attention, every token against every token
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights
