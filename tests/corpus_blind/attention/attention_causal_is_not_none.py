# source: classic (no public example found)
# exercise: attention
# accept: causal=false|causal is false|always (applies |uses )?(the )?mask|mask(s|ed)? (even|whatever|regardless|every)|is not none|none check|never (turned|switched) off|future
# why: tests `if causal is not None`, copied from the usual `if mask is not None`: False is not None, so causal=False still masks the future
# base: base_defensive

def attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: bool = True
) -> Tuple[Tensor, Tensor]:
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one length T"
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)  # (..., T, T)
    if scale:
        scores = scale_scores(scores, d)
    if causal is not None:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)  # (..., T, T)
    out = mix_values(weights, v)  # (..., T, d_v)
    return out, weights
